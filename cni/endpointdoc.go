package cni

import (
	"net/netip"
	"slices"
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
	e.Policies = n.endpointPolicies(s)
	return e
}

// ownPolicies are the policies hnscni adds, each kind on its own:
// OutBoundNAT with the exceptions of hnscni's own fields, SDNRoute to each
// service CIDR, ProviderAddress on overlay, loopback DSR, and host port
// mappings (doubled with the IPv6 flag for a dual-stack pod), with ACLs
// for them under allowAclPortMapping.
type ownPolicies struct {
	nat, routes, providerAddress, loopbackDSR, portMappings []hnslb.EndpointPolicy
}

// endpointPolicies is the endpoint's policy list: the configuration's,
// then hnscni's own. For a win-* configuration they come in the order
// win-bridge and win-overlay append theirs (containernetworking/plugins
// pkg/hns NetConf.Apply*Policy, called from each plugin's ADD), with
// ipMasq/ipMasqNetwork as their own OutBoundNAT (masqException), so the
// endpoint carries the list the reference plugin would give it:
//   - win-bridge: ipMasqNetwork, port mappings, loopback DSR;
//   - win-overlay, apiVersion 2: loopback DSR, ProviderAddress, ipMasq;
//   - win-overlay, HNS v1: ProviderAddress, ipMasq, loopback DSR.
//
// hnscni's own exceptions and service routes (fields the reference plugins
// lack) come first.
func (n *NetConf) endpointPolicies(s endpointSpec) []hnslb.EndpointPolicy {
	o := n.ownPolicies(s)
	head := slices.Concat(o.nat, o.routes)
	if n.family != familyWin {
		return mergePolicies(n.configPolicies, slices.Concat(head, o.providerAddress, o.loopbackDSR, o.portMappings))
	}
	var masq string
	switch {
	case !n.overlay() && n.IPMasqNetwork != "":
		masq = n.IPMasqNetwork
	case n.overlay() && n.IPMasq && s.nodeSubnet.IsValid():
		masq = s.nodeSubnet.String()
	}
	var before, after []hnslb.EndpointPolicy
	switch {
	case !n.overlay():
		after = slices.Concat(o.portMappings, o.loopbackDSR)
	case n.APIVersion == 2:
		before, after = slices.Concat(o.loopbackDSR, o.providerAddress), o.portMappings
	default:
		before, after = o.providerAddress, slices.Concat(o.loopbackDSR, o.portMappings)
	}
	out := mergePolicies(n.configPolicies, slices.Concat(head, before))
	return mergePolicies(masqException(out, masq), after)
}

func (n *NetConf) ownPolicies(s endpointSpec) ownPolicies {
	var o ownPolicies
	exceptions := n.natExceptionList()
	_, v4 := s.v4()
	// Pods leave the node as the node's IPv4 address, except towards the
	// cluster. IPv6 is not translated: a dual-stack cluster's IPv6 pod
	// addresses are routable, as Kubernetes expects. A reference plugin's
	// configuration says itself whether it wants NAT, so hnscni adds one
	// there only for exceptions of its own fields.
	if (v4 || len(s.addrs) == 0) && (n.family == familyNative || len(exceptions) > 0) {
		o.nat = append(o.nat, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT,
			hnslb.OutboundNatPolicySetting{Exceptions: exceptions}))
	}
	for _, svc := range n.serviceCIDRs {
		// Both reference samples (win-bridge with flannel, win-overlay) ask
		// for encapsulation so service traffic goes through VFP's load balancers.
		o.routes = append(o.routes, hnslb.NewEndpointPolicy(hnslb.EndpointPolicySDNRoute,
			hnslb.SDNRoutePolicySetting{DestinationPrefix: svc.String(), NeedEncap: true}))
	}
	if s.providerAddress.IsValid() {
		o.providerAddress = append(o.providerAddress, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
			hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: s.providerAddress.String()}))
	}
	if ip, ok := s.v4(); ok && s.loopbackDSR {
		// The reference plugins express loopback DSR as an OutBoundNAT policy
		// whose only destination is the pod's own (IPv4) address.
		o.loopbackDSR = append(o.loopbackDSR, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT,
			hnslb.OutboundNatPolicySetting{Destinations: []string{ip.String()}}))
	}
	o.portMappings = n.portMappingPolicies(s)
	return o
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

// natExceptionList is what hnscni's own OutBoundNAT leaves untranslated,
// IPv4 only and without repeats: the cluster and service CIDRs and the
// extra exceptions. (The reference fields' exceptions, ipMasq and
// ipMasqNetwork, are their own OutBoundNAT: masqException.)
func (n *NetConf) natExceptionList() []string {
	all := slices.Concat(n.clusterCIDRs, n.serviceCIDRs, n.natExceptions)
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
