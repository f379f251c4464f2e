package hnslb

import (
	"encoding/json"
	"net/netip"
)

// SchemaVersion is HNS's schema version; hnsproxy always speaks v2.0.
type SchemaVersion struct {
	Major int `json:"Major"`
	Minor int `json:"Minor"`
}

// V2 is the schema version sent with every object.
var V2 = SchemaVersion{Major: 2, Minor: 0}

// LoadBalancerFlags are load-balancer-wide flags (hcn LoadBalancerFlags).
type LoadBalancerFlags uint32

const (
	LoadBalancerFlagsNone LoadBalancerFlags = 0
	LoadBalancerFlagsDSR  LoadBalancerFlags = 1
	LoadBalancerFlagsIPv6 LoadBalancerFlags = 2
)

// PortMappingFlags are per-port-mapping flags (hcn LoadBalancerPortMappingFlags).
type PortMappingFlags uint32

const (
	PortMappingFlagsNone           PortMappingFlags = 0
	PortMappingFlagsILB            PortMappingFlags = 1
	PortMappingFlagsLocalRoutedVIP PortMappingFlags = 2
	PortMappingFlagsUseMux         PortMappingFlags = 4
	PortMappingFlagsPreserveDIP    PortMappingFlags = 8
	// PortMappingFlagsVipExternalIP is sent by kube-proxy for NodePort,
	// externalIP and ingress load balancers; hcn does not declare it.
	PortMappingFlagsVipExternalIP PortMappingFlags = 16
)

// Distribution is how a load balancer picks a backend (hcn LoadBalancerDistribution).
type Distribution uint32

const (
	DistributionNone             Distribution = 0 // 5-tuple hash per connection
	DistributionSourceIPProtocol Distribution = 1
	DistributionSourceIP         Distribution = 2 // session affinity ClientIP
)

// IP protocol numbers HNS load balancers accept.
const (
	ProtocolTCP uint32 = 6
	ProtocolUDP uint32 = 17
)

// PortMapping is a load balancer's one port mapping (hcn LoadBalancerPortMapping).
type PortMapping struct {
	Protocol         uint32           `json:",omitempty"`
	InternalPort     uint16           `json:",omitempty"`
	ExternalPort     uint16           `json:",omitempty"`
	DistributionType Distribution     `json:",omitempty"`
	Flags            PortMappingFlags `json:",omitempty"`
}

// LoadBalancer is an HNS v2 load balancer (hcn HostComputeLoadBalancer).
type LoadBalancer struct {
	ID                   string            `json:"ID,omitempty"`
	HostComputeEndpoints []string          `json:",omitempty"`
	SourceVIP            string            `json:",omitempty"`
	FrontendVIPs         []string          `json:",omitempty"`
	PortMappings         []PortMapping     `json:",omitempty"`
	SchemaVersion        SchemaVersion     `json:",omitempty"`
	Flags                LoadBalancerFlags `json:",omitempty"`
}

// EndpointFlags (hcn EndpointFlags).
type EndpointFlags uint32

const (
	EndpointFlagsNone           EndpointFlags = 0
	EndpointFlagsRemoteEndpoint EndpointFlags = 1
)

// IPConfig is one address of an endpoint (hcn IpConfig).
type IPConfig struct {
	IpAddress    string `json:",omitempty"`
	PrefixLength uint8  `json:",omitempty"`
}

// Route (hcn Route).
type Route struct {
	NextHop           string `json:",omitempty"`
	DestinationPrefix string `json:",omitempty"`
	Metric            uint16 `json:",omitempty"`
}

// DNS settings (hcn Dns).
type DNS struct {
	Domain     string   `json:",omitempty"`
	Search     []string `json:",omitempty"`
	ServerList []string `json:",omitempty"`
	Options    []string `json:",omitempty"`
}

// Health is reported by HNS and never sent by us (hcn Health).
type Health struct {
	Data  interface{} `json:",omitempty"`
	Extra ExtraParams `json:",omitempty"`
}

// ExtraParams (hcn ExtraParams).
type ExtraParams struct {
	Resources        json.RawMessage `json:",omitempty"`
	SharedContainers json.RawMessage `json:",omitempty"`
	LayeredOn        string          `json:",omitempty"`
	SwitchGuid       string          `json:",omitempty"`
	UtilityVM        string          `json:",omitempty"`
	VirtualMachine   string          `json:",omitempty"`
}

// EndpointPolicy is a typed policy with raw settings (hcn EndpointPolicy).
type EndpointPolicy struct {
	Type     EndpointPolicyType `json:""`
	Settings json.RawMessage    `json:",omitempty"`
}

// Endpoint is an HNS v2 endpoint (hcn HostComputeEndpoint). Local endpoints
// are created by the CNI; remote endpoints (flag RemoteEndpoint) by the proxy.
type Endpoint struct {
	ID                   string           `json:"ID,omitempty"`
	Name                 string           `json:",omitempty"`
	HostComputeNetwork   string           `json:",omitempty"`
	HostComputeNamespace string           `json:",omitempty"`
	Policies             []EndpointPolicy `json:",omitempty"`
	IpConfigurations     []IPConfig       `json:",omitempty"`
	Dns                  DNS              `json:",omitempty"`
	Routes               []Route          `json:",omitempty"`
	MacAddress           string           `json:",omitempty"`
	Flags                EndpointFlags    `json:",omitempty"`
	Health               Health           `json:",omitempty"`
	SchemaVersion        SchemaVersion    `json:",omitempty"`
}

// IsRemote reports whether the endpoint stands for a pod on another node.
func (e *Endpoint) IsRemote() bool { return e.Flags&EndpointFlagsRemoteEndpoint != 0 }

// KindWord is "remote" for a remote endpoint, "local" otherwise.
func (e *Endpoint) KindWord() string {
	if e.IsRemote() {
		return "remote"
	}
	return "local"
}

// HasAddress reports whether a is one of the endpoint's addresses, an
// IPv4-mapped form equal to its IPv4 one.
func (e *Endpoint) HasAddress(a netip.Addr) bool {
	for _, c := range e.IpConfigurations {
		if b, err := netip.ParseAddr(c.IpAddress); err == nil && b.Unmap() == a.Unmap() {
			return true
		}
	}
	return false
}

// IP returns the endpoint's first address, or "".
func (e *Endpoint) IP() string {
	if len(e.IpConfigurations) == 0 {
		return ""
	}
	return e.IpConfigurations[0].IpAddress
}

// NetworkType (hcn NetworkType).
type NetworkType string

const (
	NetworkTypeNAT         NetworkType = "NAT"
	NetworkTypeTransparent NetworkType = "Transparent"
	NetworkTypeL2Bridge    NetworkType = "L2Bridge"
	NetworkTypeL2Tunnel    NetworkType = "L2Tunnel"
	NetworkTypeICS         NetworkType = "ICS"
	NetworkTypePrivate     NetworkType = "Private"
	NetworkTypeOverlay     NetworkType = "Overlay"
)

// NetworkFlags (hcn NetworkFlags).
type NetworkFlags uint32

const (
	NetworkFlagsNone                NetworkFlags = 0
	NetworkFlagsEnableNonPersistent NetworkFlags = 8
	NetworkFlagsDisableHostPort     NetworkFlags = 1024
	NetworkFlagsEnableIov           NetworkFlags = 8192
)

// SubnetFlags (hcn SubnetFlags).
type SubnetFlags uint32

// Subnet (hcn Subnet).
type Subnet struct {
	IpAddressPrefix string            `json:",omitempty"`
	Policies        []json.RawMessage `json:",omitempty"`
	Routes          []Route           `json:",omitempty"`
	Flags           SubnetFlags       `json:",omitempty"`
}

// Ipam (hcn Ipam).
type Ipam struct {
	Type    string   `json:",omitempty"`
	Subnets []Subnet `json:",omitempty"`
}

// MacRange (hcn MacRange).
type MacRange struct {
	StartMacAddress string `json:",omitempty"`
	EndMacAddress   string `json:",omitempty"`
}

// MacPool (hcn MacPool).
type MacPool struct {
	Ranges []MacRange `json:",omitempty"`
}

// NetworkPolicy is a typed policy with raw settings (hcn NetworkPolicy).
type NetworkPolicy struct {
	Type     NetworkPolicyType `json:""`
	Settings json.RawMessage   `json:",omitempty"`
}

// Network is an HNS v2 network (hcn HostComputeNetwork).
type Network struct {
	ID            string          `json:"ID,omitempty"`
	Name          string          `json:",omitempty"`
	Type          NetworkType     `json:",omitempty"`
	Policies      []NetworkPolicy `json:",omitempty"`
	MacPool       MacPool         `json:",omitempty"`
	Dns           DNS             `json:",omitempty"`
	Ipams         []Ipam          `json:",omitempty"`
	Flags         NetworkFlags    `json:",omitempty"`
	Health        Health          `json:",omitempty"`
	SchemaVersion SchemaVersion   `json:",omitempty"`
}

// NamespaceType (hcn NamespaceType).
type NamespaceType string

const (
	NamespaceTypeHost         NamespaceType = "Host"
	NamespaceTypeHostDefault  NamespaceType = "HostDefault"
	NamespaceTypeGuest        NamespaceType = "Guest"
	NamespaceTypeGuestDefault NamespaceType = "GuestDefault"
)

// NamespaceResourceType (hcn NamespaceResourceType).
type NamespaceResourceType string

const (
	NamespaceResourceTypeContainer NamespaceResourceType = "Container"
	NamespaceResourceTypeEndpoint  NamespaceResourceType = "Endpoint"
)

// NamespaceResource (hcn NamespaceResource).
type NamespaceResource struct {
	Type NamespaceResourceType `json:""`
	Data json.RawMessage       `json:""`
}

// NamespaceResourceEndpoint is the Data of an Endpoint resource.
type NamespaceResourceEndpoint struct {
	ID string `json:"ID"`
}

// Namespace is an HNS v2 namespace, a network compartment (hcn HostComputeNamespace).
type Namespace struct {
	ID            string              `json:"ID,omitempty"`
	NamespaceId   uint32              `json:",omitempty"`
	Type          NamespaceType       `json:",omitempty"`
	Resources     []NamespaceResource `json:",omitempty"`
	SchemaVersion SchemaVersion       `json:",omitempty"`
}
