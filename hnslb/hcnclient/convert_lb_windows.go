//go:build windows

package hcnclient

import (
	"slices"

	"github.com/Microsoft/hcsshim/hcn"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Load balancers are converted field by field, not through convert's JSON
// round trip: each change writes some, and the round trip was half of the
// client's CPU for an update (BenchmarkUpdateLoadBalancer). The result is
// what the round trip gives (convert_lb_windows_test.go proves it for every
// field): an empty list becomes nil, nil becomes an empty load balancer,
// and nothing is shared with the source. They never fail; they return an
// error to fit the conversions the generic calls take.

func toHcnLoadBalancer(lb *hnslb.LoadBalancer) (*hcn.HostComputeLoadBalancer, error) {
	h := &hcn.HostComputeLoadBalancer{}
	if lb == nil {
		return h, nil
	}
	h.Id, h.SourceVIP, h.Flags = lb.ID, lb.SourceVIP, hcn.LoadBalancerFlags(lb.Flags)
	h.HostComputeEndpoints, h.FrontendVIPs = nonEmpty(lb.HostComputeEndpoints), nonEmpty(lb.FrontendVIPs)
	h.SchemaVersion = hcn.SchemaVersion{Major: lb.SchemaVersion.Major, Minor: lb.SchemaVersion.Minor}
	for _, pm := range lb.PortMappings {
		h.PortMappings = append(h.PortMappings, hcn.LoadBalancerPortMapping{
			Protocol: pm.Protocol, InternalPort: pm.InternalPort, ExternalPort: pm.ExternalPort,
			DistributionType: hcn.LoadBalancerDistribution(pm.DistributionType),
			Flags:            hcn.LoadBalancerPortMappingFlags(pm.Flags),
		})
	}
	return h, nil
}

func fromHcnLoadBalancer(h *hcn.HostComputeLoadBalancer) (*hnslb.LoadBalancer, error) {
	lb := &hnslb.LoadBalancer{}
	if h == nil {
		return lb, nil
	}
	lb.ID, lb.SourceVIP, lb.Flags = h.Id, h.SourceVIP, hnslb.LoadBalancerFlags(h.Flags)
	lb.HostComputeEndpoints, lb.FrontendVIPs = nonEmpty(h.HostComputeEndpoints), nonEmpty(h.FrontendVIPs)
	lb.SchemaVersion = hnslb.SchemaVersion{Major: h.SchemaVersion.Major, Minor: h.SchemaVersion.Minor}
	for _, pm := range h.PortMappings {
		lb.PortMappings = append(lb.PortMappings, hnslb.PortMapping{
			Protocol: pm.Protocol, InternalPort: pm.InternalPort, ExternalPort: pm.ExternalPort,
			DistributionType: hnslb.Distribution(pm.DistributionType),
			Flags:            hnslb.PortMappingFlags(pm.Flags),
		})
	}
	return lb, nil
}

// nonEmpty is a copy of s, nil if s is empty (as omitempty leaves it).
func nonEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}
