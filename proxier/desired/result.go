package desired

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/hnsproxy/hnsproxy/intent"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ServiceInput is one Service with the EndpointSlices labelled with its name
// (the caller groups slices by kubernetes.io/service-name).
type ServiceInput struct {
	Service *v1.Service
	Slices  []*EndpointSlice
}

// ServiceResult is what one Service asks of this node.
type ServiceResult struct {
	Name types.NamespacedName
	// Created is the Service's creationTimestamp; it orders conflict resolution.
	Created time.Time
	// ClusterIPs are the Service's valid cluster IPs (served here or not):
	// no other Service's external IP may take them (State.Conflicts).
	ClusterIPs []string
	// LBs sorted by key; no two share a key.
	LBs []intent.LB
	// ServiceVIPEndpoints are, on overlay, one remote endpoint per cluster IP
	// (IP = cluster IP, MAC = host MAC, PA = node IP) as winkernel creates them.
	// Remote endpoints for backends are State.RemoteEndpoints's to derive.
	ServiceVIPEndpoints []intent.RemoteEndpoint
	// Problems of this Service alone; keys lost to other Services are
	// reported by State.Conflicts, as they change with the others.
	Problems []Problem
	// HealthCheck is set for ETP=Local LoadBalancer Services with a
	// health-check node port.
	HealthCheck *HealthCheck
	// Truncated is the largest number of backends any one of the Service's
	// load balancers left out because of the backend cap.
	Truncated int
	// MixedPortDropped counts usable endpoints left out because their port
	// differs from the one each load balancer carries (summed over ports and families).
	MixedPortDropped int
	// NoLocalInternal and NoLocalExternal count the Service's ports, per
	// served family, with a Local internal (external) traffic policy whose
	// endpoints are usable somewhere in the cluster but not on this node:
	// what kube-proxy's sync_proxy_rules_no_local_endpoints_total counts.
	NoLocalInternal, NoLocalExternal int
	// NoProviderAddress are, on overlay, the remote backend IPs in no remote
	// subnet (reached through this node, as winkernel does), sorted: a new
	// one may be a node the routes do not show yet.
	NoProviderAddress []netip.Addr
}

// Claimant returns who the result's load balancers belong to, for conflict resolution.
func (r ServiceResult) Claimant() Claimant { return Claimant{Name: r.Name, Created: r.Created} }

// HealthCheck is the per-Service health-check node port for ETP=Local
// LoadBalancer Services: a probe over one IP family is answered 200 when
// this node has ready endpoints of that family, else 503.
type HealthCheck struct {
	NodePort uint16
	// LocalIPv4 and LocalIPv6 count this node's ready endpoints (distinct
	// IPs) of each family: kube-proxy runs a health check server per
	// family, each counting its own family's endpoints.
	LocalIPv4, LocalIPv6 int
}

// Problem is something the caller reports as an event on the Service (and a metric).
type Problem struct {
	// Reason is the event reason, one of the Reason constants.
	Reason  string
	Message string
	// Warning selects the event type (Warning, else Normal).
	Warning bool
	// NodeCause, when set, says the cause is this node, not the Service
	// (a missing zone label, the HNS version, a missing node address):
	// the same text for every Service it affects, so the caller can raise
	// one event on the Node for all of them instead of one per Service.
	NodeCause string
}

// Event reasons of Problems.
const (
	ReasonUnsupportedProtocol         = "UnsupportedProtocol"
	ReasonSessionAffinityUnsupported  = "SessionAffinityUnsupported"
	ReasonSessionAffinityTimeout      = "SessionAffinityTimeoutIgnored"
	ReasonNoDSRForLocalPolicy         = "NoDSRForLocalPolicy"
	ReasonNoDSRForPreserveDestination = "NoDSRForPreserveDestination"
	ReasonMixedTargetPorts            = "MixedTargetPorts"
	ReasonBackendsTruncated           = "BackendsTruncated"
	ReasonLoadBalancerConflict        = "LoadBalancerConflict"
	ReasonExternalIPRefused           = "ExternalIPRefused"
	ReasonIPFamilyUnsupported         = "IPFamilyUnsupported"
	ReasonIPFamilyMismatch            = "IPFamilyMismatch"
	ReasonInvalidIP                   = "InvalidIP"
	ReasonInvalidPort                 = "InvalidPort"
	ReasonInvalidEndpoint             = "InvalidEndpoint"
	ReasonProviderAddressUnknown      = "ProviderAddressUnknown"
	ReasonHealthCheckGatewayUnknown   = "HealthCheckGatewayUnknown"
	ReasonNodePortRemoteOnly          = "NodePortRemoteBackendsOnly"
	ReasonSourceRangesIgnored         = "LoadBalancerSourceRangesIgnored"
	ReasonTopologyHintsIgnored        = "TopologyHintsIgnored"
)

func warn(reason, format string, args ...any) Problem {
	return Problem{Reason: reason, Message: fmt.Sprintf(format, args...), Warning: true}
}

func note(reason, format string, args ...any) Problem {
	return Problem{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// because marks p as caused by the node: cause, the same for every Service.
func (p Problem) because(cause string, args ...any) Problem {
	p.NodeCause = fmt.Sprintf(cause, args...)
	return p
}
