//go:build windows

package hcnclient

import (
	"math"
	"testing"

	"github.com/Microsoft/hcsshim/hcn"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// inHcnRanges is hcn's rule for a feature's version ranges
// (hcn/hcnsupport.go isFeatureInRange, unexported): the version is within
// one range, its bounds included, the bounds compared major first.
func inHcnRanges(v hnslb.Version, ranges hcn.VersionRanges) bool {
	for _, r := range ranges {
		lo, hi := r.MinVersion, r.MaxVersion
		if v.Major < lo.Major || v.Major > hi.Major ||
			v.Major == lo.Major && v.Minor < lo.Minor || v.Major == hi.Major && v.Minor > hi.Minor {
			continue
		}
		return true
	}
	return false
}

// TestFeaturesForMatchesHcnVersionRanges: hnslb.FeaturesFor decides each
// feature kube-proxy asks hcn about as hcn's version ranges do, on every
// version around their bounds (DSR's range has an upper bound: 9.3 to 9.x,
// then 10.2 on). The one deliberate difference: modify counts from 15.5,
// not hcn's 15.4 (kubernetes/kubernetes#131466).
func TestFeaturesForMatchesHcnVersionRanges(t *testing.T) {
	var versions []hnslb.Version
	for major := 0; major <= 17; major++ {
		for _, minor := range []int{0, 1, 2, 3, 4, 5, 9, 10, 11, 99, math.MaxInt32} {
			versions = append(versions, hnslb.Version{Major: major, Minor: minor})
		}
	}
	versions = append(versions, hnslb.Version{Major: math.MaxInt32, Minor: math.MaxInt32})
	for _, v := range versions {
		f := hnslb.FeaturesFor(v)
		modify := inHcnRanges(v, hcn.ModifyLoadbalancerVersion) && v != hnslb.Version{Major: 15, Minor: 4}
		for _, c := range []struct {
			name      string
			got, want bool
		}{
			{"APIV2", f.APIV2, inHcnRanges(v, hcn.V2ApiSupport)},
			{"RemoteSubnet", f.RemoteSubnet, inHcnRanges(v, hcn.RemoteSubnetVersion)},
			{"DSR", f.DSR, inHcnRanges(v, hcn.DSRVersion)},
			{"IPv6DualStack", f.IPv6DualStack, inHcnRanges(v, hcn.IPv6DualStackVersion)},
			{"SessionAffinity", f.SessionAffinity, inHcnRanges(v, hcn.SessionAffinityVersion)},
			{"ModifyLoadBalancer", f.ModifyLoadBalancer, modify},
		} {
			if c.got != c.want {
				t.Errorf("HNS %s: %s = %v, hcn's ranges say %v", v, c.name, c.got, c.want)
			}
		}
	}
}
