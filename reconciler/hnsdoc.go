package reconciler

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// BuildLB is the HNS document for a desired load balancer whose backends
// resolved to endpointIDs. The intent.IPv6 flag always follows the key's family,
// so that KeyOf(BuildLB(d)) == d.Key.
func BuildLB(d *intent.LB, endpointIDs []string) *hnslb.LoadBalancer {
	lb := &hnslb.LoadBalancer{
		HostComputeEndpoints: endpointIDs,
		SourceVIP:            d.SourceVIP,
		PortMappings: []hnslb.PortMapping{{
			Protocol:         d.Key.Protocol,
			InternalPort:     d.InternalPort,
			ExternalPort:     d.Key.Port,
			DistributionType: d.Distribution,
			Flags:            d.PortFlags,
		}},
		SchemaVersion: hnslb.V2,
		Flags:         d.Flags,
	}
	if d.Key.VIP != "" {
		lb.FrontendVIPs = []string{d.Key.VIP}
	}
	if d.Key.Family == intent.IPv6 {
		lb.Flags |= hnslb.LoadBalancerFlagsIPv6
	}
	return lb
}

// KeyOf is the frontend identity of a load balancer found in HNS; ok is
// false for shapes hnsproxy never makes (no or several port mappings). The
// family is the listing's (hnslb.LoadBalancer.IsIPv6: the IPv6 flag's echo
// no public capture shows, baseline.go).
func KeyOf(lb *hnslb.LoadBalancer) (intent.LBKey, bool) {
	if len(lb.PortMappings) != 1 || len(lb.FrontendVIPs) > 1 {
		return intent.LBKey{}, false
	}
	pm := lb.PortMappings[0]
	k := intent.LBKey{Family: intent.IPv4, Protocol: pm.Protocol, Port: pm.ExternalPort}
	if lb.IsIPv6() {
		k.Family = intent.IPv6
	}
	if len(lb.FrontendVIPs) == 1 {
		k.VIP = lb.FrontendVIPs[0]
		if a, err := netip.ParseAddr(k.VIP); err == nil {
			// HNS keeps an address as bytes and may print it in another
			// form than the one sent (sim.Echo.LongIPv6).
			k.VIP = a.String()
		}
	}
	return k, true
}

// sameLB reports whether two load balancer documents program the same
// dataplane. IDs and the schema version are ignored, endpoint IDs compare
// as sets (HNS does not promise to keep their order). It compares documents
// we built; whether one HNS returned is ours and unchanged is decided by
// Reconciler.unchanged (baseline.go).
func sameLB(a, b *hnslb.LoadBalancer) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameFrontendFields(a, b) && sameIDSet(a.HostComputeEndpoints, b.HostComputeEndpoints)
}

// sameFrontendFields reports whether a and b have, as written, the same
// flags, source VIP, frontend VIPs and port mappings.
func sameFrontendFields(a, b *hnslb.LoadBalancer) bool {
	return a.SourceVIP == b.SourceVIP && a.Flags == b.Flags &&
		slices.Equal(a.FrontendVIPs, b.FrontendVIPs) && slices.Equal(a.PortMappings, b.PortMappings)
}

func sameIDSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	if slices.EqualFunc(a, b, strings.EqualFold) {
		return true
	}
	as, bs := lowerSorted(a), lowerSorted(b)
	return slices.Equal(as, bs)
}

func lowerSorted(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strings.ToLower(id)
	}
	slices.Sort(out)
	return out
}

// buildRemoteEndpoint is the HNS document for a remote endpoint, or for a
// local one hnsproxy owns (the overlay source-VIP endpoint).
func buildRemoteEndpoint(networkID string, re intent.RemoteEndpoint) *hnslb.Endpoint {
	ep := &hnslb.Endpoint{
		HostComputeNetwork: networkID,
		IpConfigurations:   []hnslb.IPConfig{{IpAddress: re.IP}},
		MacAddress:         re.MAC,
		Flags:              hnslb.EndpointFlagsRemoteEndpoint,
		SchemaVersion:      hnslb.V2,
	}
	if re.Local {
		ep.Flags = hnslb.EndpointFlagsNone
		return ep
	}
	ep.Name = remoteEndpointName(re.IP)
	if re.ProviderAddress != "" {
		ep.Policies = []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
			hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: re.ProviderAddress})}
	}
	return ep
}

// remoteSpecOf reads back what a remote endpoint found in HNS stands for.
func remoteSpecOf(ep *hnslb.Endpoint) intent.RemoteEndpoint {
	return intent.RemoteEndpoint{IP: ep.IP(), MAC: ep.MacAddress, ProviderAddress: ep.ProviderAddress(), Local: !ep.IsRemote()}
}

// remoteMatches reports whether a realized remote endpoint serves a desired
// one. An empty desired MAC accepts whatever MAC HNS picked.
func remoteMatches(want, got intent.RemoteEndpoint) bool {
	if want.IP != got.IP || want.Local != got.Local {
		return false
	}
	// A local endpoint carries no provider address policy.
	if !want.Local && want.ProviderAddress != got.ProviderAddress {
		return false
	}
	return want.MAC == "" || sameMAC(want.MAC, got.MAC)
}

// sameMAC compares MACs across the two spellings HNS and Kubernetes use
// (00-15-5D-.. and 00:15:5d:..) without building either: it runs for every
// backend of every load balancer a Sync writes.
func sameMAC(a, b string) bool {
	if a == b {
		// Most often one spelling copied from the other (a realized spec
		// is the wanted one it was created from): equal without folding,
		// and without reading either's bytes when they share them.
		return true
	}
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := foldMAC(a[i]), foldMAC(b[i])
		if x != y {
			return false
		}
	}
	return true
}

func foldMAC(c byte) byte {
	switch {
	case c == ':':
		return '-'
	case 'A' <= c && c <= 'Z':
		return c + 'a' - 'A'
	}
	return c
}
