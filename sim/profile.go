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
	// MaxBackends overrides the version's default backend cap when > 0.
	MaxBackends int
	// ModifyQuirk is HNS 15.4: ModifyLoadBalancer returns success but leaves
	// the backends unchanged (kubernetes/kubernetes#131466).
	ModifyQuirk bool
	// LocalRemoteIPOverlap lets a local and a remote endpoint share an IP on
	// one network, a bug of Windows Server 2019 and 2022 that kube-proxy
	// cleans up after (pkg/proxy/winkernel/hns.go, getAllEndpointsByNetwork).
	LocalRemoteIPOverlap bool
}

// Features is what callers see: hnslb.FeaturesFor(Version) with the
// MaxBackends override. A ModifyQuirk profile reports no modify, because
// hnsproxy treats 15.4 as lacking it, although its Update "succeeds".
func (p Profile) Features() hnslb.Features {
	f := hnslb.FeaturesFor(p.Version)
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
	ProfileWS2019     = "ws2019"
	ProfileWS2022     = "ws2022"
	ProfileWS2025Mod4 = "ws2025-15.4"
	ProfileWS2025     = "ws2025"
)

// The versions: Windows Server 2019 (1809) reports HNS 9.x (9.3 in
// kubernetes/kubernetes#93304, 9.5 in #137530); Windows Server 2022 reports
// 13.x (hcn's SetPolicy and L4WfpProxy gates at 13.0/13.2 are its features);
// Windows Server 2025 reports 15.4 on early builds (kubernetes#131466) and
// 15.5+ once modify works.
var profiles = map[string]Profile{
	ProfileWS2019: {
		Name: ProfileWS2019, Version: hnslb.Version{Major: 9, Minor: 5},
		MaxBackends: hnslb.MaxBackendsLegacy, LocalRemoteIPOverlap: true,
	},
	ProfileWS2022: {
		Name: ProfileWS2022, Version: hnslb.Version{Major: 13, Minor: 2},
		MaxBackends: hnslb.MaxBackendsModern, LocalRemoteIPOverlap: true,
	},
	ProfileWS2025Mod4: {
		Name: ProfileWS2025Mod4, Version: hnslb.Version{Major: 15, Minor: 4},
		MaxBackends: hnslb.MaxBackendsModern, ModifyQuirk: true,
	},
	ProfileWS2025: {
		Name: ProfileWS2025, Version: hnslb.Version{Major: 15, Minor: 5},
		MaxBackends: hnslb.MaxBackendsModern,
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
		a, b := out[i].Version, out[j].Version
		return !a.AtLeast(b.Major, b.Minor)
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
