package hnslb

import "fmt"

// Version is the HNS version HNS reports (hcn Version).
type Version struct {
	Major int `json:"Major"`
	Minor int `json:"Minor"`
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// AtLeast reports v >= major.minor.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// Features is what this HNS can do, derived from its version the way hcn does
// (hcnglobals.go; hcnclient's TestFeaturesForMatchesHcnVersionRanges holds
// it to hcn's ranges), with one correction: HNS 15.4 advertises
// ModifyLoadbalancer but leaves backends unchanged
// (kubernetes/kubernetes#131466), so modify counts only from 15.5, as in
// Microsoft/hnslib, the hcn fork kube-proxy builds on (15.5 to 15.x and
// 16.0 on; TestFeaturesForModifyMatchesHnslib).
type Features struct {
	Version            Version
	APIV2              bool
	RemoteSubnet       bool
	DSR                bool
	IPv6DualStack      bool
	SessionAffinity    bool
	ModifyLoadBalancer bool
	// MaxBackends is the per-load-balancer backend cap (64 on older builds).
	MaxBackends int
}

// Backend caps HNS builds enforce.
const (
	MaxBackendsLegacy = 64
	MaxBackendsModern = 1024
)

// FeaturesFor derives features from an HNS version.
func FeaturesFor(v Version) Features {
	f := Features{
		Version:         v,
		APIV2:           v.AtLeast(9, 2),
		RemoteSubnet:    v.AtLeast(9, 2),
		DSR:             (v.Major == 9 && v.Minor >= 3) || v.AtLeast(10, 2),
		IPv6DualStack:   v.AtLeast(11, 10),
		SessionAffinity: v.AtLeast(12, 0),
		// 15.4 claims modify but does not apply backend changes.
		ModifyLoadBalancer: v.AtLeast(15, 5),
		MaxBackends:        MaxBackendsLegacy,
	}
	// Windows Server 2022 (HNS 13.x) and later lift the 64-destination cap.
	if v.AtLeast(13, 0) {
		f.MaxBackends = MaxBackendsModern
	}
	return f
}
