package hnslb

import "fmt"

// OSBuild is the Windows build a node runs (major.minor.build.UBR, e.g.
// 10.0.17763.2746). HNS's version does not say it: the same HNS version
// ships across many cumulative updates, and two facts hnsproxy needs (the
// backend cap, known OS bugs) changed within one version. The zero value
// is "unknown".
type OSBuild struct {
	Major int `json:"major"`
	Minor int `json:"minor"`
	Build int `json:"build"`
	// UBR is the update build revision: the cumulative update installed.
	UBR int `json:"ubr"`
}

// Windows Server releases by build number.
const (
	BuildWS2019 = 17763
	BuildWS2022 = 20348
	BuildWS2025 = 26100
)

// Known reports whether the build was read at all.
func (b OSBuild) Known() bool { return b.Build > 0 }

func (b OSBuild) String() string {
	if !b.Known() {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d.%d.%d", b.Major, b.Minor, b.Build, b.UBR)
}

// AtLeast reports b >= build.ubr (major.minor are 10.0 for every build here).
func (b OSBuild) AtLeast(build, ubr int) bool {
	return b.Build > build || (b.Build == build && b.UBR >= ubr)
}

// The backend cap's boundary: Windows Server 2019 capped a load balancer at
// 64 destinations (kubernetes/kubernetes#98680, microsoft/Windows-Containers#93:
// 0x57 "invalid number of destinations"); Amazon's EKS Windows guide says the
// 64 limit is gone "after a Windows Server update starting with OS Build
// 17763.2746" and puts it at 1024 (awsdocs/amazon-eks-user-guide#591).
const (
	capLiftedBuild = BuildWS2019
	capLiftedUBR   = 2746
)

// capLifted is the first build without the 64 cap, as Windows writes it.
var capLifted = fmt.Sprintf("%d.%d", capLiftedBuild, capLiftedUBR)

// DefaultBackendCapRule is DefaultBackendCap's rule for a known build, in
// words, for flag help and messages ("64 before 17763.2746, 1024 from it on").
var DefaultBackendCapRule = fmt.Sprintf("%d before %s, %d from it on", MaxBackendsLegacy, capLifted, MaxBackendsModern)

// BackendCap is a default backend cap and why.
type BackendCap struct {
	Max    int
	Reason string
}

// DefaultBackendCap is the per-load-balancer backend cap to assume on build b
// with HNS version v: keyed on the OS build when it is known (64 below
// 17763.2746, 1024 from it on), else on the HNS version (FeaturesFor). Either
// can be wrong on a build nobody published; the reconciler learns a lower
// cap from HNS's answer.
func DefaultBackendCap(b OSBuild, v Version) BackendCap {
	if !b.Known() {
		return BackendCap{Max: FeaturesFor(v).MaxBackends, Reason: fmt.Sprintf("OS build unknown; from HNS %s", v)}
	}
	if b.AtLeast(capLiftedBuild, capLiftedUBR) {
		return BackendCap{Max: MaxBackendsModern, Reason: fmt.Sprintf("OS build %s >= %s", b, capLifted)}
	}
	return BackendCap{Max: MaxBackendsLegacy, Reason: fmt.Sprintf("OS build %s < %s", b, capLifted)}
}
