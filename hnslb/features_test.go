package hnslb

import (
	"math"
	"testing"
)

// TestFeaturesForModifyMatchesHnslib: modify counts where Microsoft/hnslib,
// the hcn fork kube-proxy's winkernel builds on, says it does
// (ModifyLoadbalancerVersion in hnslib v0.1.2 and v0.1.3 hcn/hcnglobals.go:
// 15.5 to 15.x, "in Zn", and 16.0 on, "in Ge"). hcsshim v0.15 says 15.4 on;
// 15.4 is the version of kubernetes/kubernetes#131466, and the only one
// known to answer a modify while leaving the backends: a modify forced on
// (hnsModifyLoadBalancer "enabled") is read back there, and trusted
// elsewhere. hcnclient's TestFeaturesForMatchesHcnVersionRanges holds the
// other features to hcn's ranges, on Windows only; this one runs everywhere.
func TestFeaturesForModifyMatchesHnslib(t *testing.T) {
	for _, c := range []struct {
		v               Version
		want            bool
		ignoresBackends bool
	}{
		{Version{Major: 14, Minor: 4}, false, false},
		{Version{Major: 14, Minor: 99}, false, false},
		{Version{Major: 15, Minor: 0}, false, false},
		{Version{Major: 15, Minor: 3}, false, false},
		{Version{Major: 15, Minor: 4}, false, true},
		{Version{Major: 15, Minor: 5}, true, false},
		{Version{Major: 15, Minor: math.MaxInt32}, true, false},
		{Version{Major: 16, Minor: 0}, true, false},
		{Version{Major: 16, Minor: 4}, true, false},
		{Version{Major: 17, Minor: 3}, true, false},
		{Version{Major: math.MaxInt32, Minor: math.MaxInt32}, true, false},
	} {
		if got := FeaturesFor(c.v).ModifyLoadBalancer; got != c.want {
			t.Errorf("HNS %s: ModifyLoadBalancer = %v, hnslib's ranges say %v", c.v, got, c.want)
		}
		if got := ModifyMayIgnoreBackends(c.v); got != c.ignoresBackends {
			t.Errorf("ModifyMayIgnoreBackends(%s) = %v, want %v", c.v, got, c.ignoresBackends)
		}
	}
}

// TestFeaturesStartAtHcnsFirstVersions: DSR, IPv6 dual stack and session
// affinity start where hcn's ranges (hcn/hcnglobals.go, hcsshim v0.15) start
// them (DSR at 9.3 and again at 10.2), and the 64-backend cap ends with
// Windows Server 2022's HNS 13.0; off Windows nothing else holds them
// (hcnclient's TestFeaturesForMatchesHcnVersionRanges runs on Windows only).
func TestFeaturesStartAtHcnsFirstVersions(t *testing.T) {
	for _, c := range []struct {
		v                        Version
		dsr, ipv6, affinity, big bool
	}{
		{Version{Major: 9, Minor: 2}, false, false, false, false},
		{Version{Major: 9, Minor: 3}, true, false, false, false},
		{Version{Major: 10, Minor: 1}, false, false, false, false},
		{Version{Major: 10, Minor: 2}, true, false, false, false},
		{Version{Major: 11, Minor: 9}, true, false, false, false},
		{Version{Major: 11, Minor: 10}, true, true, false, false},
		{Version{Major: 11, Minor: math.MaxInt32}, true, true, false, false},
		{Version{Major: 12, Minor: 0}, true, true, true, false},
		{Version{Major: 12, Minor: math.MaxInt32}, true, true, true, false},
		{Version{Major: 13, Minor: 0}, true, true, true, true},
	} {
		f := FeaturesFor(c.v)
		wantMax := MaxBackendsLegacy
		if c.big {
			wantMax = MaxBackendsModern
		}
		if f.DSR != c.dsr || f.IPv6DualStack != c.ipv6 || f.SessionAffinity != c.affinity || f.MaxBackends != wantMax {
			t.Errorf("HNS %s: DSR %v, IPv6 %v, affinity %v, cap %d; want %v, %v, %v, %d",
				c.v, f.DSR, f.IPv6DualStack, f.SessionAffinity, f.MaxBackends, c.dsr, c.ipv6, c.affinity, wantMax)
		}
	}
}
