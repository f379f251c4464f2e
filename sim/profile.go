package sim

import (
	"fmt"
	"sort"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Profile is the behaviour of one Windows Server build's HNS.
type Profile struct {
	Name    string
	Version hnslb.Version
	// OSBuild is the Windows build the node reports (registry
	// CurrentBuildNumber and UBR); the backend cap follows it.
	OSBuild hnslb.OSBuild
	// MaxBackends overrides the build's backend cap when > 0: a build that
	// enforces another cap than the public sources say (modelled, unseen).
	MaxBackends int
	// Bugs are the OS dataplane bugs this build has (the packet model, vfp,
	// reproduces them). Whether a later 20348 build fixed them is
	// unpublished, so profiles model both: with and without.
	Bugs []hnslb.OSBug
	// ModifyQuirk is HNS 15.4: ModifyLoadBalancer returns success but leaves
	// the backends unchanged (kubernetes/kubernetes#131466).
	ModifyQuirk bool
	// LocalRemoteIPOverlap lets a local and a remote endpoint share an IP on
	// one network, a bug of Windows Server 2019 and 2022 that kube-proxy
	// cleans up after (pkg/proxy/winkernel/hns.go, getAllEndpointsByNetwork).
	LocalRemoteIPOverlap bool
}

// Features is what this HNS does: hnslb.FeaturesFor(Version) with the
// backend cap of its OS build (hnslb.DefaultBackendCap), or MaxBackends
// when set. A ModifyQuirk profile reports no modify, because hnsproxy
// treats 15.4 as lacking it, although its Update "succeeds".
func (p Profile) Features() hnslb.Features {
	f := hnslb.FeaturesFor(p.Version)
	f.MaxBackends = hnslb.DefaultBackendCap(p.OSBuild, p.Version).Max
	if p.MaxBackends > 0 {
		f.MaxBackends = p.MaxBackends
	}
	if p.ModifyQuirk {
		f.ModifyLoadBalancer = false
	}
	return f
}

// modify says how UpdateLoadBalancer behaves on this profile.
type modifyMode int

const (
	modifyUnsupported     modifyMode = iota // E_NOTIMPL
	modifyIgnoresBackends                   // 15.4: success, backends unchanged
	modifyWorks
)

func (p Profile) modify() modifyMode {
	switch {
	case p.ModifyQuirk:
		return modifyIgnoresBackends
	case p.Features().ModifyLoadBalancer:
		return modifyWorks
	default:
		return modifyUnsupported
	}
}

// Profile names.
const (
	ProfileWS2019       = "ws2019"
	ProfileWS2019Lifted = "ws2019-2746"
	ProfileWS2022       = "ws2022"
	ProfileWS2022RTM    = "ws2022-rtm"
	ProfileWS2022KB     = "ws2022-kb5005619"
	ProfileWS2022Cap64  = "ws2022-cap64"
	ProfileWS2025Mod4   = "ws2025-15.4"
	ProfileWS2025       = "ws2025"
)

// osBuild is 10.0.build.ubr.
func osBuild(build, ubr int) hnslb.OSBuild {
	return hnslb.OSBuild{Major: 10, Minor: 0, Build: build, UBR: ubr}
}

// The versions: Windows Server 2019 (1809) reports HNS 9.x (9.3 in
// kubernetes/kubernetes#93304, 9.5 in #137530); Windows Server 2022 reports
// 13.x (hcn's SetPolicy and L4WfpProxy gates at 13.0/13.2 are its features);
// Windows Server 2025 reports 15.4 on early builds (kubernetes#131466);
// ws2025 reports 15.5, the first version with a working modify, although
// hnslib places 15.5+ in Zn and 16.0+ in Ge (26100), so a real node likely
// reports 16.x: hnsproxy decides both alike. The OS builds are real cumulative updates
// (Windows Server release information, learn.microsoft.com): 17763.1757
// (2021-02, when kubernetes#98680 met the 64 cap), 17763.2746 (2022-03, the
// update Amazon's EKS guide names for 1024), 20348.169 (Windows Server 2022
// at release), 20348.288 (2021-10, after KB5005619 = 20348.261), 20348.2227
// (2024-01), 26100.1742 (Windows Server 2025 at release) and 26100.4061
// (2025-05).
var profiles = map[string]Profile{
	ProfileWS2019: {
		Name: ProfileWS2019, Version: hnslb.Version{Major: 9, Minor: 5}, OSBuild: osBuild(hnslb.BuildWS2019, 1757),
		LocalRemoteIPOverlap: true,
	},
	ProfileWS2019Lifted: {
		Name: ProfileWS2019Lifted, Version: hnslb.Version{Major: 9, Minor: 5}, OSBuild: osBuild(hnslb.BuildWS2019, 2746),
		LocalRemoteIPOverlap: true,
	},
	// ws2022 is a build with both OS bugs fixed (Windows-Containers#204 was
	// closed after a backport; which build carries it is unpublished).
	ProfileWS2022: {
		Name: ProfileWS2022, Version: hnslb.Version{Major: 13, Minor: 2}, OSBuild: osBuild(hnslb.BuildWS2022, 2227),
		LocalRemoteIPOverlap: true,
	},
	ProfileWS2022RTM: {
		Name: ProfileWS2022RTM, Version: hnslb.Version{Major: 13, Minor: 2}, OSBuild: osBuild(hnslb.BuildWS2022, 169),
		LocalRemoteIPOverlap: true, Bugs: []hnslb.OSBug{hnslb.BugOverlayNodePortRemote},
	},
	ProfileWS2022KB: {
		Name: ProfileWS2022KB, Version: hnslb.Version{Major: 13, Minor: 2}, OSBuild: osBuild(hnslb.BuildWS2022, 288),
		LocalRemoteIPOverlap: true, Bugs: []hnslb.OSBug{hnslb.BugL2BridgeDSRPodToService, hnslb.BugOverlayNodePortRemote},
	},
	// ws2022-cap64 is HNS >= 13 on a build that still enforces 64 backends:
	// never reported, modelled so that hnsproxy's learning of the cap is tested.
	ProfileWS2022Cap64: {
		Name: ProfileWS2022Cap64, Version: hnslb.Version{Major: 13, Minor: 2}, OSBuild: osBuild(hnslb.BuildWS2022, 2227),
		MaxBackends: hnslb.MaxBackendsLegacy, LocalRemoteIPOverlap: true,
	},
	ProfileWS2025Mod4: {
		Name: ProfileWS2025Mod4, Version: hnslb.Version{Major: 15, Minor: 4}, OSBuild: osBuild(hnslb.BuildWS2025, 1742),
		ModifyQuirk: true,
	},
	ProfileWS2025: {
		Name: ProfileWS2025, Version: hnslb.Version{Major: 15, Minor: 5}, OSBuild: osBuild(hnslb.BuildWS2025, 4061),
	},
}

// ProfileByName returns a built-in profile.
func ProfileByName(name string) (Profile, error) {
	p, ok := profiles[name]
	if !ok {
		return Profile{}, fmt.Errorf("sim: unknown HNS profile %q (known: %v)", name, profileNames())
	}
	return p, nil
}

// Profiles returns every built-in profile, oldest first.
func Profiles() []Profile {
	out := make([]Profile, 0, len(profiles))
	for _, p := range profiles {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Version != b.Version {
			return !a.Version.AtLeast(b.Version.Major, b.Version.Minor)
		}
		if a.OSBuild != b.OSBuild {
			return !a.OSBuild.AtLeast(b.OSBuild.Build, b.OSBuild.UBR)
		}
		return a.Name < b.Name
	})
	return out
}

func profileNames() []string {
	var names []string
	for _, p := range Profiles() {
		names = append(names, p.Name)
	}
	return names
}
