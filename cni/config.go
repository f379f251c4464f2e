package cni

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/version"
)

// Modes: the HNS network types the plugin wires pods into.
const (
	ModeL2Bridge = "l2bridge"
	ModeOverlay  = "overlay"
)

// NetConf is hnscni's network configuration (docs/cni.md).
type NetConf struct {
	types.PluginConf

	// Mode is ModeL2Bridge or ModeOverlay; it must match the HNS network's type.
	Mode string `json:"mode"`
	// Network is the HNS network's name.
	Network string `json:"network"`
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
	// HNSEndpoint selects HNS: "unix:///path" for hnssim. Empty: env
	// HNS_ENDPOINT, else the real HNS on Windows.
	HNSEndpoint string `json:"hnsEndpoint,omitempty"`

	RuntimeConfig RuntimeConfig `json:"runtimeConfig,omitempty"`

	// Parsed forms.
	clusterCIDRs, serviceCIDRs []netip.Prefix
	natExceptions              []netip.Prefix
	providerAddress            netip.Addr
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
	switch n.Mode {
	case ModeL2Bridge, ModeOverlay:
	case "":
		return nil, invalidConfig(`"mode" is required: %q or %q`, ModeL2Bridge, ModeOverlay)
	default:
		return nil, invalidConfig("unknown mode %q: want %q or %q", n.Mode, ModeL2Bridge, ModeOverlay)
	}
	if strings.TrimSpace(n.Network) == "" {
		return nil, invalidConfig(`"network" (the HNS network name) is required`)
	}
	if n.IPAM.Type == "" {
		return nil, invalidConfig(`"ipam" with a "type" is required (hnscni delegates address management)`)
	}
	var err error
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
		if n.providerAddress, err = netip.ParseAddr(n.ProviderAddress); err != nil {
			return nil, invalidConfig("providerAddress %q: %v", n.ProviderAddress, err)
		}
	}
	for i, pm := range n.RuntimeConfig.PortMappings {
		if _, err := pm.protocolNumber(); err != nil {
			return nil, invalidConfig("portMappings[%d]: %v", i, err)
		}
		if !validPort(pm.HostPort) || !validPort(pm.ContainerPort) {
			return nil, invalidConfig("portMappings[%d]: ports must be 1-65535 (host %d, container %d)", i, pm.HostPort, pm.ContainerPort)
		}
		if pm.HostIP != "" {
			if _, err := netip.ParseAddr(pm.HostIP); err != nil {
				return nil, invalidConfig("portMappings[%d]: hostIP %q: %v", i, pm.HostIP, err)
			}
		}
	}
	if n.RawPrevResult != nil {
		if err := version.ParsePrevResult(&n.PluginConf); err != nil {
			return nil, types.NewError(types.ErrDecodingFailure, "malformed prevResult", err.Error())
		}
	}
	return n, nil
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

func (pm PortMapping) protocolNumber() (uint32, error) {
	switch strings.ToLower(pm.Protocol) {
	case "tcp", "":
		return 6, nil
	case "udp":
		return 17, nil
	}
	return 0, fmt.Errorf("protocol %q: want tcp or udp", pm.Protocol)
}

// dns merges the configured DNS with the runtime's ("dns" capability wins).
func (n *NetConf) dns() types.DNS {
	d := n.DNS
	if r := n.RuntimeConfig.DNS; r != nil && n.Capabilities["dns"] {
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

// overlay reports whether pods go on an HNS overlay (VXLAN) network.
func (n *NetConf) overlay() bool { return n.Mode == ModeOverlay }
