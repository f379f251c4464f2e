package cni

import (
	"net/netip"
	"strconv"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// podAddr is one of a pod's addresses: with the subnet's prefix length, and
// the next hop of its family's default route.
type podAddr struct {
	addr    netip.Prefix
	gateway netip.Addr
}

// endpointSpec is what an endpoint is built from.
type endpointSpec struct {
	name string
	// addrs are the pod's addresses, one per family, IPv4 first; none when
	// HNS assigns the address (no IPAM).
	addrs           []podAddr
	providerAddress netip.Addr // overlay only
	loopbackDSR     bool
	dns             types.DNS
	// nodeSubnet is the network's pod subnet (win-overlay's ipMasq exception).
	nodeSubnet netip.Prefix
}

// v4 is the pod's IPv4 address, if it has one.
func (s endpointSpec) v4() (netip.Addr, bool) {
	for _, a := range s.addrs {
		if a.addr.Addr().Is4() {
			return a.addr.Addr(), true
		}
	}
	return netip.Addr{}, false
}

// hasIPv6 reports a pod with an IPv6 address.
func (s endpointSpec) hasIPv6() bool {
	for _, a := range s.addrs {
		if a.addr.Addr().Is6() {
			return true
		}
	}
	return false
}

// endpointMACFor derives an endpoint's MAC from its address (see endpointMAC).
func (n *NetConf) endpointMACFor(s endpointSpec) string {
	return endpointMAC(n.macPrefix, s.addrs[0].addr.Addr())
}

// buildEndpoint is the endpoint document ADD sends: the pod's addresses, a
// default route per family, DNS, and the policies: the configuration's own
// (policies / AdditionalArgs), merged with those hnscni adds.
func (n *NetConf) buildEndpoint(s endpointSpec) *hnslb.Endpoint {
	d := s.dns
	e := &hnslb.Endpoint{
		Name:          s.name,
		Dns:           hnslb.DNS{Domain: d.Domain, Search: d.Search, ServerList: d.Nameservers, Options: d.Options},
		SchemaVersion: hnslb.V2,
	}
	if len(s.addrs) > 0 {
		e.MacAddress = n.endpointMACFor(s)
	}
	for _, a := range s.addrs {
		e.IpConfigurations = append(e.IpConfigurations, hnslb.IPConfig{IpAddress: a.addr.Addr().String(), PrefixLength: uint8(a.addr.Bits())})
		e.Routes = append(e.Routes, hnslb.Route{NextHop: a.gateway.String(), DestinationPrefix: defaultRoute(a.addr.Addr()).String()})
	}
	e.Policies = mergePolicies(n.configPolicies, n.ownPolicies(s))
	return e
}

// ownPolicies are the policies hnscni adds: OutBoundNAT with the in-cluster
// exceptions, SDNRoute to each service CIDR, ProviderAddress on overlay,
// loopback DSR, and host port mappings (doubled with the IPv6 flag for a
// dual-stack pod), with ACLs for them under allowAclPortMapping.
func (n *NetConf) ownPolicies(s endpointSpec) []hnslb.EndpointPolicy {
	var out []hnslb.EndpointPolicy
	exceptions := n.natExceptionList(s)
	_, v4 := s.v4()
	// Pods leave the node as the node's IPv4 address, except towards the
	// cluster. IPv6 is not translated: a dual-stack cluster's IPv6 pod
	// addresses are routable, as Kubernetes expects. A reference plugin's
	// configuration says itself whether it wants NAT, so hnscni adds one
	// there only for exceptions of its own fields.
	if (v4 || len(s.addrs) == 0) && (n.family == familyNative || len(exceptions) > 0) {
		out = append(out, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT,
			hnslb.OutboundNatPolicySetting{Exceptions: exceptions}))
	}
	for _, svc := range n.serviceCIDRs {
		// Both reference samples (win-bridge with flannel, win-overlay) ask
		// for encapsulation so service traffic goes through VFP's load balancers.
		out = append(out, hnslb.NewEndpointPolicy(hnslb.EndpointPolicySDNRoute,
			hnslb.SDNRoutePolicySetting{DestinationPrefix: svc.String(), NeedEncap: true}))
	}
	if s.providerAddress.IsValid() {
		out = append(out, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
			hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: s.providerAddress.String()}))
	}
	if ip, ok := s.v4(); ok && s.loopbackDSR {
		// The reference plugins express loopback DSR as an OutBoundNAT policy
		// whose only destination is the pod's own (IPv4) address.
		out = append(out, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT,
			hnslb.OutboundNatPolicySetting{Destinations: []string{ip.String()}}))
	}
	return append(out, n.portMappingPolicies(s)...)
}

// portMappingPolicies are the runtime's port mappings as HNS policies.
func (n *NetConf) portMappingPolicies(s endpointSpec) []hnslb.EndpointPolicy {
	var out []hnslb.EndpointPolicy
	flags := hnslb.NatFlagsNone
	if n.OptionalFlags.LocalRoutedPortMapping {
		flags = hnslb.NatFlagsLocalRoutedVip
	}
	for _, pm := range n.RuntimeConfig.PortMappings {
		proto, _ := pm.protocolNumber() // validated by parseConfig
		setting := hnslb.PortMappingPolicySetting{Protocol: proto, InternalPort: uint16(pm.ContainerPort), ExternalPort: uint16(pm.HostPort), VIP: pm.HostIP, Flags: flags}
		if hostIP, err := netip.ParseAddr(pm.HostIP); err == nil && hostIP.Is6() {
			setting.Flags |= hnslb.NatFlagsIPv6
		}
		out = append(out, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyPortMapping, setting))
		if (pm.HostIP == "" && s.hasIPv6()) || (n.OptionalFlags.EnableDualStack && setting.Flags&hnslb.NatFlagsIPv6 == 0) {
			// A mapping on every host address needs its IPv6 twin (sdnbridge
			// adds one for every mapping under enableDualStack).
			twin := setting
			twin.VIP, twin.Flags = "", flags|hnslb.NatFlagsIPv6
			out = append(out, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyPortMapping, twin))
		}
		if n.OptionalFlags.AllowACLPortMapping {
			// sdnbridge's inbound allow rule for the mapped port.
			out = append(out, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyACL, aclSetting{
				Protocols: strconv.Itoa(int(proto)), Action: "Allow", Direction: "In",
				LocalPorts: strconv.Itoa(pm.ContainerPort), Priority: 1000,
			}))
		}
	}
	return out
}

// aclSetting is the part of hcn's AclPolicySetting an inbound allow rule uses.
type aclSetting struct {
	Protocols  string
	Action     string
	Direction  string
	LocalPorts string
	Priority   uint16
}

// natExceptionList is what OutBoundNAT leaves untranslated, IPv4 only and
// without repeats: the cluster and service CIDRs, the extra exceptions,
// and the reference fields' exceptions (win-bridge's ipMasqNetwork on
// l2bridge; the node's pod subnet under win-overlay's ipMasq).
func (n *NetConf) natExceptionList(s endpointSpec) []string {
	all := append(append(append([]netip.Prefix(nil), n.clusterCIDRs...), n.serviceCIDRs...), n.natExceptions...)
	if n.family != familySDN {
		if p, err := netip.ParsePrefix(n.IPMasqNetwork); err == nil && !n.overlay() {
			all = append(all, p.Masked())
		}
		if n.IPMasq && n.overlay() && s.nodeSubnet.IsValid() {
			all = append(all, s.nodeSubnet)
		}
	}
	var out []string
	seen := map[netip.Prefix]bool{}
	for _, p := range all {
		if p.IsValid() && p.Addr().Is4() && !seen[p] {
			seen[p] = true
			out = append(out, p.String())
		}
	}
	return out
}

func defaultRoute(ip netip.Addr) netip.Prefix {
	if ip.Is4() {
		return netip.MustParsePrefix("0.0.0.0/0")
	}
	return netip.MustParsePrefix("::/0")
}
