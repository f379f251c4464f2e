package cni

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// endpointName names the HNS endpoint of one attachment: the container ID,
// "_", and the interface name with its own "_"s written as ":" (which CNI
// forbids in interface names), so that the last "_" always separates the
// two and no two attachments share a name ((c, "eth_0") and ("c_eth", "0")
// would otherwise both be "c_eth_0"). Interface names without "_", the
// usual case, are kept as they are.
func endpointName(containerID, ifName string) string {
	return containerID + "_" + strings.ReplaceAll(ifName, "_", ":")
}

// attachmentOf inverts endpointName.
func attachmentOf(name string) (containerID, ifName string) {
	i := strings.LastIndexByte(name, '_')
	if i < 0 {
		return name, ""
	}
	return name[:i], strings.ReplaceAll(name[i+1:], ":", "_")
}

// ownName matches names endpointName builds (a CNI container ID, "_", an
// encoded interface name), so GC leaves other agents' endpoints alone.
var ownName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.\-]*_[^_/\s]{1,15}$`)

// ours reports whether hnscni made an endpoint: a local endpoint named as
// endpointName names them, with the MAC endpointMAC derives from its address.
// HNS endpoints carry no owner tag; both marks together do not happen by chance.
func ours(e *hnslb.Endpoint) bool {
	if e.IsRemote() || !ownName.MatchString(e.Name) {
		return false
	}
	ip, err := netip.ParseAddr(e.IP())
	return err == nil && strings.EqualFold(e.MacAddress, endpointMAC(ip))
}

// endpointMAC derives the MAC from the pod address, as win-overlay does
// ("0E-2A" and the IPv4 address's four bytes; the last four for IPv6): unique
// per address on a node, and stable across re-creations of the endpoint.
func endpointMAC(ip netip.Addr) string {
	b := ip.As16()
	return fmt.Sprintf("0E-2A-%02X-%02X-%02X-%02X", b[12], b[13], b[14], b[15])
}

// cniMAC is an HNS MAC ("0E-2A-...") in the colon form CNI results use.
func cniMAC(hnsMAC string) string {
	hw, err := net.ParseMAC(strings.ReplaceAll(hnsMAC, "-", ":"))
	if err != nil {
		return hnsMAC
	}
	return hw.String()
}

// podAddr is one of a pod's addresses: with the subnet's prefix length, and
// the next hop of its family's default route.
type podAddr struct {
	addr    netip.Prefix
	gateway netip.Addr
}

// endpointSpec is what an endpoint is built from.
type endpointSpec struct {
	name            string
	addrs           []podAddr  // one per family, IPv4 first
	providerAddress netip.Addr // overlay only
	loopbackDSR     bool
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

// buildEndpoint is the endpoint document ADD sends: the pod's addresses,
// a default route per family and DNS, and the policies the reference
// Windows plugins send (OutBoundNAT with in-cluster exceptions, SDNRoute to
// each service CIDR, ProviderAddress on overlay, loopback DSR, host port
// mappings, doubled with the IPv6 flag for a dual-stack pod).
func (n *NetConf) buildEndpoint(s endpointSpec) *hnslb.Endpoint {
	d := n.dns()
	e := &hnslb.Endpoint{
		Name:          s.name,
		MacAddress:    endpointMAC(s.addrs[0].addr.Addr()),
		Dns:           hnslb.DNS{Domain: d.Domain, Search: d.Search, ServerList: d.Nameservers, Options: d.Options},
		SchemaVersion: hnslb.V2,
	}
	for _, a := range s.addrs {
		e.IpConfigurations = append(e.IpConfigurations, hnslb.IPConfig{IpAddress: a.addr.Addr().String(), PrefixLength: uint8(a.addr.Bits())})
		e.Routes = append(e.Routes, hnslb.Route{NextHop: a.gateway.String(), DestinationPrefix: defaultRoute(a.addr.Addr()).String()})
	}
	// Pods leave the node as the node's IPv4 address, except towards the
	// cluster. IPv6 is not translated: a dual-stack cluster's IPv6 pod
	// addresses are routable, as Kubernetes expects.
	if _, ok := s.v4(); ok {
		e.Policies = append(e.Policies, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT,
			hnslb.OutboundNatPolicySetting{Exceptions: n.natExceptionList()}))
	}
	for _, svc := range n.serviceCIDRs {
		// Both reference samples (win-bridge with flannel, win-overlay) ask
		// for encapsulation so service traffic goes through VFP's load balancers.
		e.Policies = append(e.Policies, hnslb.NewEndpointPolicy(hnslb.EndpointPolicySDNRoute,
			hnslb.SDNRoutePolicySetting{DestinationPrefix: svc.String(), NeedEncap: true}))
	}
	if s.providerAddress.IsValid() {
		e.Policies = append(e.Policies, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
			hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: s.providerAddress.String()}))
	}
	if v4, ok := s.v4(); ok && s.loopbackDSR {
		// The reference plugins express loopback DSR as an OutBoundNAT policy
		// whose only destination is the pod's own (IPv4) address.
		e.Policies = append(e.Policies, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT,
			hnslb.OutboundNatPolicySetting{Destinations: []string{v4.String()}}))
	}
	for _, pm := range n.RuntimeConfig.PortMappings {
		proto, _ := pm.protocolNumber() // validated by parseConfig
		setting := hnslb.PortMappingPolicySetting{Protocol: proto, InternalPort: uint16(pm.ContainerPort), ExternalPort: uint16(pm.HostPort), VIP: pm.HostIP}
		hostIP, err := netip.ParseAddr(pm.HostIP)
		v6Host := err == nil && hostIP.Is6()
		if v6Host {
			setting.Flags = hnslb.NatFlagsIPv6
		}
		e.Policies = append(e.Policies, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyPortMapping, setting))
		if pm.HostIP == "" && s.hasIPv6() {
			// A mapping on every host address needs its IPv6 twin.
			setting.Flags = hnslb.NatFlagsIPv6
			e.Policies = append(e.Policies, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyPortMapping, setting))
		}
	}
	return e
}

// natExceptionList is the IPv4 cluster and service CIDRs and the extra
// exceptions, without repeats: what OutBoundNAT leaves untranslated.
func (n *NetConf) natExceptionList() []string {
	var out []string
	seen := map[netip.Prefix]bool{}
	all := append(append(append([]netip.Prefix(nil), n.clusterCIDRs...), n.serviceCIDRs...), n.natExceptions...)
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
