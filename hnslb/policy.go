package hnslb

import (
	"encoding/json"
	"fmt"
)

// EndpointPolicyType (hcn EndpointPolicyType); only those hnsproxy uses.
type EndpointPolicyType string

const (
	EndpointPolicyPortMapping     EndpointPolicyType = "PortMapping"
	EndpointPolicyACL             EndpointPolicyType = "ACL"
	EndpointPolicyOutBoundNAT     EndpointPolicyType = "OutBoundNAT"
	EndpointPolicySDNRoute        EndpointPolicyType = "SDNRoute"
	EndpointPolicyProviderAddress EndpointPolicyType = "ProviderAddress"
	EndpointPolicyEncapOverhead   EndpointPolicyType = "EncapOverhead"
)

// NetworkPolicyType (hcn NetworkPolicyType); only those hnsproxy uses.
type NetworkPolicyType string

const (
	NetworkPolicySourceMacAddress  NetworkPolicyType = "SourceMacAddress"
	NetworkPolicyNetAdapterName    NetworkPolicyType = "NetAdapterName"
	NetworkPolicyDrMacAddress      NetworkPolicyType = "DrMacAddress"
	NetworkPolicyProviderAddress   NetworkPolicyType = "ProviderAddress"
	NetworkPolicyRemoteSubnetRoute NetworkPolicyType = "RemoteSubnetRoute"
	NetworkPolicyVxlanPort         NetworkPolicyType = "VxlanPort"
	NetworkPolicyHostRoute         NetworkPolicyType = "HostRoute"
)

// NatFlags (hcn NatFlags).
type NatFlags uint32

const (
	NatFlagsNone           NatFlags = 0
	NatFlagsLocalRoutedVip NatFlags = 1
	NatFlagsIPv6           NatFlags = 2
)

// PortMappingPolicySetting (hcn PortMappingPolicySetting): a host port mapping.
type PortMappingPolicySetting struct {
	Protocol     uint32   `json:",omitempty"`
	InternalPort uint16   `json:",omitempty"`
	ExternalPort uint16   `json:",omitempty"`
	VIP          string   `json:",omitempty"`
	Flags        NatFlags `json:",omitempty"`
}

// OutboundNatPolicySetting (hcn OutboundNatPolicySetting).
type OutboundNatPolicySetting struct {
	VirtualIP        string   `json:",omitempty"`
	Exceptions       []string `json:",omitempty"`
	Destinations     []string `json:",omitempty"`
	Flags            NatFlags `json:",omitempty"`
	MaxPortPoolUsage uint16   `json:",omitempty"`
}

// SDNRoutePolicySetting (hcn SDNRoutePolicySetting).
type SDNRoutePolicySetting struct {
	DestinationPrefix string `json:",omitempty"`
	NextHop           string `json:",omitempty"`
	NeedEncap         bool   `json:",omitempty"`
}

// ProviderAddressEndpointPolicySetting (hcn ProviderAddressEndpointPolicySetting).
type ProviderAddressEndpointPolicySetting struct {
	ProviderAddress string `json:",omitempty"`
}

// SourceMacAddressNetworkPolicySetting (hcn SourceMacAddressNetworkPolicySetting).
type SourceMacAddressNetworkPolicySetting struct {
	SourceMacAddress string `json:",omitempty"`
}

// DrMacAddressNetworkPolicySetting (hcn DrMacAddressNetworkPolicySetting).
type DrMacAddressNetworkPolicySetting struct {
	Address string `json:",omitempty"`
}

// ProviderAddressNetworkPolicySetting (hcn ProviderAddressNetworkPolicySetting).
type ProviderAddressNetworkPolicySetting struct {
	ProviderAddress string `json:",omitempty"`
}

// RemoteSubnetRoutePolicySetting (hcn RemoteSubnetRoutePolicySetting): on an
// overlay network, which node (provider address) hosts which pod subnet.
type RemoteSubnetRoutePolicySetting struct {
	DestinationPrefix           string
	IsolationId                 uint16
	ProviderAddress             string
	DistributedRouterMacAddress string
}

// SubnetPolicyVSID is the type of the subnet policy that carries an overlay
// network's VXLAN id (hcn SubnetPolicyType VSID).
const SubnetPolicyVSID = "VSID"

// VsidPolicySetting (hcn VsidPolicySetting): the VXLAN id of an overlay subnet.
type VsidPolicySetting struct {
	IsolationId uint32
}

// subnetPolicy is hcn's SubnetPolicy: Subnet.Policies holds them raw.
type subnetPolicy struct {
	Type     string
	Settings VsidPolicySetting
}

// NewVSIDSubnetPolicy is the VSID policy an overlay network's subnet carries,
// as HNS stores it: {"Type":"VSID","Settings":{"IsolationId":4096}}.
func NewVSIDSubnetPolicy(vni uint32) json.RawMessage {
	raw, err := json.Marshal(subnetPolicy{Type: SubnetPolicyVSID, Settings: VsidPolicySetting{IsolationId: vni}})
	if err != nil {
		panic(fmt.Sprintf("hnslb: marshal %s settings: %v", SubnetPolicyVSID, err))
	}
	return raw
}

// VxlanPortPolicySetting (hcn VxlanPortPolicySetting).
type VxlanPortPolicySetting struct {
	Port uint16
}

// NewEndpointPolicy marshals settings into a typed endpoint policy.
func NewEndpointPolicy(t EndpointPolicyType, settings any) EndpointPolicy {
	raw, err := json.Marshal(settings)
	if err != nil {
		// Settings are our own plain structs; failing to marshal one is a programming error.
		panic(fmt.Sprintf("hnslb: marshal %s settings: %v", t, err))
	}
	return EndpointPolicy{Type: t, Settings: raw}
}

// NewNetworkPolicy marshals settings into a typed network policy.
func NewNetworkPolicy(t NetworkPolicyType, settings any) NetworkPolicy {
	raw, err := json.Marshal(settings)
	if err != nil {
		panic(fmt.Sprintf("hnslb: marshal %s settings: %v", t, err))
	}
	return NetworkPolicy{Type: t, Settings: raw}
}

// DecodeSettings unmarshals a policy's raw settings into out.
func DecodeSettings(raw json.RawMessage, out any) error {
	if len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// ProviderAddress returns the endpoint's ProviderAddress policy value, or "".
func (e *Endpoint) ProviderAddress() string {
	for _, p := range e.Policies {
		if p.Type == EndpointPolicyProviderAddress {
			var s ProviderAddressEndpointPolicySetting
			if DecodeSettings(p.Settings, &s) == nil {
				return s.ProviderAddress
			}
		}
	}
	return ""
}

// RemoteSubnetRoutes returns the network's RemoteSubnetRoute policies.
func (n *Network) RemoteSubnetRoutes() []RemoteSubnetRoutePolicySetting {
	out := make([]RemoteSubnetRoutePolicySetting, 0, len(n.Policies))
	for _, p := range n.Policies {
		if p.Type != NetworkPolicyRemoteSubnetRoute {
			continue
		}
		var s RemoteSubnetRoutePolicySetting
		if DecodeSettings(p.Settings, &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// ProviderAddress returns the network's own ProviderAddress policy value, or "".
func (n *Network) ProviderAddress() string {
	for _, p := range n.Policies {
		if p.Type == NetworkPolicyProviderAddress {
			var s ProviderAddressNetworkPolicySetting
			if DecodeSettings(p.Settings, &s) == nil {
				return s.ProviderAddress
			}
		}
	}
	return ""
}
