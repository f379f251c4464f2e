package cni

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/version"
)

// Modes: the HNS network types the plugin wires pods into.
const (
	ModeL2Bridge = "l2bridge"
	ModeOverlay  = "overlay"
)

// VXLAN defaults of an overlay network hnscni creates: Flannel's and the
// Windows overlay scripts' VNI, and the IANA VXLAN port.
const (
	defaultVNI       = 4096
	defaultVXLANPort = 4789
)

// NetConf is hnscni's network configuration (docs/cni.md): its own fields
// and those of the reference Windows plugins (compat.go).
type NetConf struct {
	types.PluginConf

	// Mode is ModeL2Bridge or ModeOverlay (Calico's "windows-bgp" and
	// "vxlan" too); empty: from the plugin type, else the HNS network's type.
	Mode string `json:"mode,omitempty"`
	// Network is the HNS network's name; empty: Name, as the reference
	// plugins take it.
	Network string `json:"network,omitempty"`
	// ClusterCIDR and ServiceCIDR are exempt from outbound NAT; ServiceCIDR
	// also gets an SDNRoute so service traffic goes through VFP's load
	// balancers. On a dual-stack cluster each is two CIDRs, one per family,
	// comma-separated as kube-proxy's --cluster-cidr is.
	ClusterCIDR string `json:"clusterCIDR,omitempty"`
	ServiceCIDR string `json:"serviceCIDR,omitempty"`
	// OutboundNATExceptions are further destinations pods reach with their own
	// address (e.g. the node network).
	OutboundNATExceptions []string `json:"outboundNATExceptions,omitempty"`
	// LoopbackDSR lets a pod reach itself through a service VIP (HNS DSR).
	LoopbackDSR bool `json:"loopbackDSR,omitempty"`
	// ProviderAddress is the node's overlay provider address, used when the
	// HNS network does not carry a ProviderAddress policy.
	ProviderAddress string `json:"providerAddress,omitempty"`
	// VXLANVNI and VXLANPort shape an overlay network hnscni creates.
	VXLANVNI  uint32 `json:"vxlanVNI,omitempty"`
	VXLANPort uint16 `json:"vxlanPort,omitempty"`
	// HNSEndpoint selects HNS: "unix:///path" for hnssim. Empty: env
	// HNS_ENDPOINT, else the real HNS on Windows.
	HNSEndpoint string `json:"hnsEndpoint,omitempty"`

	referenceFields

	RuntimeConfig RuntimeConfig `json:"runtimeConfig,omitempty"`
	// SpecAttachments is GC's list of still-valid attachments under the key
	// CNI 1.1.0 as released named it; types.PluginConf's ValidAttachments
	// is the key libcni sends, which the spec adopted later
	// (containernetworking/cni#1101). gc.go reads the two as one list.
	SpecAttachments []types.GCAttachment `json:"cni.dev/attachments,omitempty"`

	// Parsed forms.
	family                     family
	clusterCIDRs, serviceCIDRs []netip.Prefix
	natExceptions              []netip.Prefix
	providerAddress            netip.Addr
	configPolicies             []configPolicy
	networkPolicies            []json.RawMessage
	macPrefix                  string
	// warnings name what the plugin ignores; Main prints them on stderr.
	warnings []string
	// anyNetworkType is set for DEL (parseReleaseConfig), which reads only
	// the network's ID and subnet: a network of another type than the mode
	// does not stop the release.
	anyNetworkType bool
}

// RuntimeConfig holds the capability arguments the runtime passes.
type RuntimeConfig struct {
	PortMappings []PortMapping `json:"portMappings,omitempty"`
	DNS          *RuntimeDNS   `json:"dns,omitempty"`
}

// PortMapping is the "portMappings" capability's entry.
type PortMapping struct {
	HostPort      int    `json:"hostPort"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol"`
	HostIP        string `json:"hostIP,omitempty"`
}

// RuntimeDNS is the "dns" capability's value.
type RuntimeDNS struct {
	Servers  []string `json:"servers,omitempty"`
	Searches []string `json:"searches,omitempty"`
	Options  []string `json:"options,omitempty"`
}

// invalidConfig is the CNI error for a configuration the plugin refuses.
func invalidConfig(format string, args ...any) *types.Error {
	return types.NewError(types.ErrInvalidNetworkConfig, fmt.Sprintf(format, args...), "")
}

// parseConfig decodes and validates stdin. Checks that need HNS (does the
// network have the mode's type) come later.
func parseConfig(stdin []byte) (*NetConf, error) {
	n := &NetConf{}
	if err := json.Unmarshal(stdin, n); err != nil {
		return nil, types.NewError(types.ErrDecodingFailure, "malformed network configuration", err.Error())
	}
	var err error
	if n.warnings, err = unknownFields(stdin); err != nil {
		return nil, err
	}
	n.family = familyOf(n)
	if n.Mode, err = modeOf(n); err != nil {
		return nil, err
	}
	if strings.TrimSpace(n.Network) == "" {
		n.Network = n.Name
	}
	if strings.TrimSpace(n.Network) == "" {
		return nil, invalidConfig(`"name" (the HNS network name, or "network" if it differs) is required`)
	}
	if err := n.parseReferenceFields(); err != nil {
		return nil, err
	}
	if n.clusterCIDRs, err = cidrsPerFamily("clusterCIDR", n.ClusterCIDR); err != nil {
		return nil, err
	}
	if n.serviceCIDRs, err = cidrsPerFamily("serviceCIDR", n.ServiceCIDR); err != nil {
		return nil, err
	}
	for i, s := range n.OutboundNATExceptions {
		p, err := optionalPrefix(fmt.Sprintf("outboundNATExceptions[%d]", i), s)
		if err != nil {
			return nil, err
		}
		if p.IsValid() {
			n.natExceptions = append(n.natExceptions, p)
		}
	}
	if n.ProviderAddress != "" {
		if n.providerAddress, err = parseAddr(n.ProviderAddress); err != nil {
			return nil, invalidConfig("providerAddress %q: %v", n.ProviderAddress, err)
		}
	}
	if n.VXLANVNI == 0 {
		n.VXLANVNI = n.CalicoVNI
	}
	if n.VXLANVNI > 1<<24-1 || (n.VXLANVNI != 0 && n.VXLANVNI < 4096) {
		// Flannel's Windows backend refuses VNIs below 4096 (the VSIDs
		// below are HNS's own); a VNI is 24 bits.
		return nil, invalidConfig("vxlanVNI %d: want 4096 to 16777215", n.VXLANVNI)
	}
	if n.VXLANVNI == 0 {
		n.VXLANVNI = defaultVNI
	}
	if n.VXLANPort == 0 {
		n.VXLANPort = defaultVXLANPort
	}
	n.skipUnknownProtocols()
	if n.RawPrevResult != nil {
		if err := version.ParsePrevResult(&n.PluginConf); err != nil {
			return nil, types.NewError(types.ErrDecodingFailure, "malformed prevResult", err.Error())
		}
	}
	return n, nil
}

// skipUnknownProtocols drops, with a warning, the port mappings of a
// protocol HNS cannot map (containerd passes "sctp"), for a win-*
// configuration, as win-bridge does (pkg/hns ApplyPortMappingPolicy). The
// others refuse them on ADD (checkPortMappings), as sdnbridge does.
func (n *NetConf) skipUnknownProtocols() {
	if n.family != familyWin {
		return
	}
	var kept []PortMapping
	for i, pm := range n.RuntimeConfig.PortMappings {
		if _, err := pm.protocolNumber(); err != nil {
			n.warnings = append(n.warnings, fmt.Sprintf("portMappings[%d]: %v; skipped, as win-bridge does", i, err))
			continue
		}
		kept = append(kept, pm)
	}
	n.RuntimeConfig.PortMappings = kept
}

// checkPortMappings refuses a port mapping HNS cannot take. ADD only: DEL
// gets the same runtimeConfig (Flannel replays ADD's) and must release the
// pod whatever it says.
func (n *NetConf) checkPortMappings() error {
	for i, pm := range n.RuntimeConfig.PortMappings {
		if _, err := pm.protocolNumber(); err != nil {
			return invalidConfig("portMappings[%d]: %v", i, err)
		}
		if !validPort(pm.HostPort) || !validPort(pm.ContainerPort) {
			return invalidConfig("portMappings[%d]: ports must be 1-65535 (host %d, container %d)", i, pm.HostPort, pm.ContainerPort)
		}
		if pm.HostIP != "" {
			if _, err := parseAddr(pm.HostIP); err != nil {
				return invalidConfig("portMappings[%d]: hostIP %q: %v", i, pm.HostIP, err)
			}
		}
	}
	return nil
}

// parseAddr reads an address of the configuration as the reference plugins
// read theirs (Go's net.ParseIP, which types.IPNet and the IPAM results use
// too): an IPv4 part with leading zeros or an IPv6 zone is refused, where
// netip.ParseAddr would keep the zone and hand it to HNS.
func parseAddr(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err == nil && a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("an IPv6 zone (%%%s) has no place in an HNS address", a.Zone())
	}
	return a, err
}

func optionalPrefix(field, s string) (netip.Prefix, error) {
	if s == "" {
		return netip.Prefix{}, nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, invalidConfig("%s %q is not a CIDR: %v", field, s, err)
	}
	return p.Masked(), nil
}

// cidrsPerFamily parses "" or comma-separated CIDRs, at most one per family.
func cidrsPerFamily(field, s string) ([]netip.Prefix, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []netip.Prefix
	for i, part := range strings.Split(s, ",") {
		p, err := optionalPrefix(field, strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		if !p.IsValid() {
			return nil, invalidConfig("%s %q: empty CIDR at position %d", field, s, i+1)
		}
		for _, q := range out {
			if q.Addr().Is4() == p.Addr().Is4() {
				return nil, invalidConfig("%s %q: two CIDRs of one IP family; give at most one IPv4 and one IPv6", field, s)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

func validPort(p int) bool { return p > 0 && p <= 65535 }

// protocolNumber reads a port mapping's protocol as the reference plugins
// do: a name (tcp, udp, icmpv4, icmpv6, igmp) or a number; empty is tcp.
func (pm PortMapping) protocolNumber() (uint32, error) {
	return protocolNumber(pm.Protocol)
}

// dns is the endpoint's and the result's DNS: the configured one, each
// field the runtime's "dns" capability sets replaced, as both reference
// families do. libcni passes runtimeConfig only for declared capabilities,
// and a delegating plugin (Flannel) passes it without them, so the plugin
// does not check the declaration again. The sdnbridge/sdnoverlay family
// prefixes the first search domain with the pod's namespace. Calico takes
// one or the other whole (calicoDNS).
func (n *NetConf) dns(podNamespace string) types.DNS {
	if strings.EqualFold(n.Type, calicoType) {
		return n.calicoDNS()
	}
	d := n.DNS
	d.Search = append([]string(nil), d.Search...)
	if n.family == familySDN && podNamespace != "" && len(d.Search) > 0 {
		d.Search[0] = podNamespace + "." + d.Search[0]
	}
	if r := n.RuntimeConfig.DNS; r != nil {
		if len(r.Servers) > 0 {
			d.Nameservers = r.Servers
		}
		if len(r.Searches) > 0 {
			d.Search = r.Searches
		}
		if len(r.Options) > 0 {
			d.Options = r.Options
		}
	}
	return d
}

// calicoDNS is the DNS as Calico for Windows chooses it: the runtime's
// whole (servers, searches and options, empty ones too) when it names a
// server, else the configured one whole; unlike win-bridge and win-overlay
// it never mixes the two (projectcalico/calico
// cni-plugin/pkg/dataplane/windows/dataplane_windows.go, DoNetworking).
// Where it matters: a pod whose DNS names servers without searches
// (dnsPolicy None, or Default on a host without a suffix list) gets no
// cluster search domain.
func (n *NetConf) calicoDNS() types.DNS {
	if r := n.RuntimeConfig.DNS; r != nil && len(r.Servers) > 0 {
		return types.DNS{Nameservers: r.Servers, Search: r.Searches, Options: r.Options}
	}
	d := n.DNS
	d.Search = slices.Clone(d.Search)
	return d
}

// overlay reports whether pods go on an HNS overlay (VXLAN) network.
func (n *NetConf) overlay() bool { return n.Mode == ModeOverlay }

// hnsIPAM reports a configuration without IPAM: HNS assigns the address
// from the network's subnet.
func (n *NetConf) hnsIPAM() bool { return n.IPAM.Type == "" }

// protocolNumber reads a protocol name or number as the reference plugins
// do; empty is TCP.
func protocolNumber(s string) (uint32, error) {
	names := map[string]uint32{"": 6, "tcp": 6, "udp": 17, "icmpv4": 1, "icmpv6": 58, "igmp": 2}
	if p, ok := names[strings.ToLower(s)]; ok {
		return p, nil
	}
	if u, err := strconv.ParseUint(s, 0, 8); err == nil {
		return uint32(u), nil
	}
	return 0, fmt.Errorf("protocol %q: want tcp, udp, icmpv4, icmpv6, igmp or a protocol number", s)
}
