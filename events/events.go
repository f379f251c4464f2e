// Package events owns how hnsproxy reports Kubernetes events: the
// events.k8s.io/v1 broadcaster and recorder (as kube-proxy builds them), and
// the reasons and typed methods for the events the daemon itself raises
// (start, HNS capabilities, servers, HNS rejections). The proxier raises the
// Service mapping problems through the same recorder, which cuts a note to
// the length the API accepts (note.go). Problems one cause on the node can
// give every load balancer are raised one by one only a few at a time
// (bound.go), and those one round raises of one object and reason go out
// as one event, which the broadcaster would otherwise fold (batch.go);
// mapping problems whose cause is the node (a missing zone label, the HNS
// version) are raised once on the Node for every Service they affect (the
// proxier's nodecause.go).
//
// Events name hnsproxy as their reporting controller, not kube-proxy: during
// a migration both run in one cluster, and operators need to tell which one
// spoke. The reasons kube-proxy also uses keep kube-proxy's names.
package events

import (
	"fmt"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	k8sevents "k8s.io/client-go/tools/events"
)

// ReportingController is the component name events carry.
const ReportingController = "hnsproxy"

// Reasons on Services. The proxier reports problems of the Service →
// HNS mapping itself, with the reasons of proxier/desired (BackendsTruncated,
// UnsupportedProtocol, NoDSRForLocalPolicy, MixedTargetPorts, ...); these are
// the ones raised outside that pure mapping.
const (
	// ReasonLoadBalancerRejected: HNS refused a load balancer.
	ReasonLoadBalancerRejected = "HNSLoadBalancerRejected"
	// ReasonEndpointAddressRefused: HNS refuses the remote endpoint of one of
	// a load balancer's backends for its address, so the load balancer
	// leaves that backend out on this node.
	ReasonEndpointAddressRefused = "HNSEndpointAddressRefused"
	// ReasonEndpointRejected: HNS refuses the remote endpoint of one of a
	// load balancer's backends as a document it will not take (one of
	// hnslb.InvalidDocumentCodes, such as 0x803b001e for an address in
	// none of the network's subnets), so the load balancer leaves that
	// backend out on this node.
	ReasonEndpointRejected = "HNSEndpointRejected"
	// ReasonFailedToStartServiceHealthcheck is kube-proxy's: a health-check node port could not be opened.
	ReasonFailedToStartServiceHealthcheck = "FailedToStartServiceHealthcheck"
)

// Reasons on the Node.
const (
	// ReasonStarting is kube-proxy's birth cry.
	ReasonStarting = "Starting"
	// ReasonHNSFeatureUnavailable: the configuration asks for an HNS feature this node's HNS lacks.
	ReasonHNSFeatureUnavailable = "HNSFeatureUnavailable"
	// ReasonFailedToStartProxierHealthcheck and ReasonFailedToStartMetricServer are kube-proxy's.
	ReasonFailedToStartProxierHealthcheck = "FailedToStartProxierHealthcheck"
	ReasonFailedToStartMetricServer       = "FailedToStartMetricServer"
	// ReasonStateFileWriteFailed: the state file recording which HNS objects
	// hnsproxy owns could not be written; raised once per failure streak.
	ReasonStateFileWriteFailed = "StateFileWriteFailed"
	// ReasonOSBugWorkaround: this node's Windows build has a known dataplane
	// bug and hnsproxy programs HNS around it (or was told not to).
	ReasonOSBugWorkaround = "OSBugWorkaround"
	// ReasonConfigFileRejected: the --config file changed to a
	// configuration hnsproxy would not start with; it runs on with the one
	// it started with.
	ReasonConfigFileRejected = "ConfigFileRejected"
)

// Actions (the events/v1 "action" field).
const (
	ActionSync  = "Sync"
	ActionStart = "StartKubeProxy" // kube-proxy's action on its start events
	ActionCheck = "CheckHNS"
	ActionSave  = "SaveState"
	ActionRead  = "ReadConfig"
)

// NewBroadcaster returns an events.k8s.io/v1 broadcaster writing through client.
// Start it with StartRecordingToSink and Shutdown it on exit.
func NewBroadcaster(client kubernetes.Interface) k8sevents.EventBroadcaster {
	return k8sevents.NewBroadcaster(&k8sevents.EventSinkImpl{Interface: client.EventsV1()})
}

// Reporter emits hnsproxy's events.
type Reporter struct {
	rec      k8sevents.EventRecorder
	nodeName string
	uids     atomic.Pointer[ServiceUIDs]
}

// NewReporter reports through b's recorder as hnsproxy running on nodeName.
func NewReporter(b k8sevents.EventBroadcaster, nodeName string) *Reporter {
	r := &Reporter{nodeName: nodeName}
	r.rec = recorder{EventRecorder: b.NewRecorder(scheme.Scheme, ReportingController), uids: &r.uids}
	return r
}

// Recorder is the reporter's recorder, for code that takes one (the proxier,
// the service health server): a Service reference without a UID gets the
// Service's, and a note longer than the API takes is cut.
func (r *Reporter) Recorder() k8sevents.EventRecorder { return r.rec }

// ServiceRef references a Service.
func ServiceRef(svc types.NamespacedName) *v1.ObjectReference {
	return &v1.ObjectReference{APIVersion: "v1", Kind: "Service", Namespace: svc.Namespace, Name: svc.Name}
}

// NodeRef references a Node by name with the name as its UID, one of the
// two UIDs `kubectl describe node` looks a Node's events up by (the Node's
// real UID is the other); an event without a UID shows under no Node
// (kubernetes/kubectl#1838). kubelet and kube-proxy long set the name as
// UID (cmd/kube-proxy/app/server.go); an upstream change drops it, so such
// Node events show only in `kubectl get events`. hnsproxy keeps the name: it raises Node events
// before its Node informer has the real UID, and after the Node is gone.
func NodeRef(name string) *v1.ObjectReference {
	return &v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: name, UID: types.UID(name)}
}

func (r *Reporter) service(svc types.NamespacedName, reason, note string, args ...any) {
	r.rec.Eventf(ServiceRef(svc), nil, v1.EventTypeWarning, reason, ActionSync, "node %s: "+note, append([]any{r.nodeName}, args...)...)
}

// LoadBalancerRejected: HNS refused the load balancer for port; err carries HNS's code and message.
func (r *Reporter) LoadBalancerRejected(svc types.NamespacedName, port, frontend string, err error) {
	r.service(svc, ReasonLoadBalancerRejected, "HNS rejected the load balancer for port %s (%s): %v", port, frontend, err)
}

// LoadBalancersRejected, on the Node: HNS refused more load balancers
// with error code than are raised one by one (raised were, on their
// Services); this is the next, and those after it are raised nowhere until
// at most raised are refused with code (Bound). HNS that refuses every
// write would otherwise raise one event per load balancer. The count is of
// load balancers, not Service ports: one port has one per frontend (cluster
// IP, node port, external and ingress IPs, each family).
func (r *Reporter) LoadBalancersRejected(code string, raised int, svc types.NamespacedName, port, frontend string, err error) {
	r.rec.Eventf(NodeRef(r.nodeName), nil, v1.EventTypeWarning, ReasonLoadBalancerRejected, ActionSync,
		"HNS rejects more than %d load balancers with %s; the others are not raised on their Services while it lasts "+
			`(hnsproxy_objects{state="failed"} counts them, /debug/hns and hnsproxy-diag list them). The next, port %s of %s (%s): %v`,
		raised, code, port, svc, frontend, err)
}

// EndpointAddressRefused: HNS refuses the remote endpoint for backend ip of
// the load balancer for port; err says what holds the address, or that
// nothing does.
func (r *Reporter) EndpointAddressRefused(svc types.NamespacedName, port, frontend, ip string, err error) {
	r.service(svc, ReasonEndpointAddressRefused, "backend %s of port %s (%s) is left out: %v", ip, port, frontend, err)
}

// EndpointAddressesRefused, on the Node: load balancers leave out more
// backends whose remote endpoints HNS refuses with error code than are
// raised one by one (raised were, on their Services); this is the next,
// and those after it are raised nowhere until at most raised are left out
// for that code (Bound). One address refused in many Services, or HNS
// refusing every remote endpoint, would otherwise raise one event per load
// balancer and backend.
func (r *Reporter) EndpointAddressesRefused(code string, raised int, svc types.NamespacedName, port, frontend, ip string, err error) {
	r.backendsLeftOut(ReasonEndpointAddressRefused, "refuses", code, raised, svc, port, frontend, ip, err)
}

// EndpointRejected: HNS refuses the remote endpoint for backend ip of the
// load balancer for port as a document it will not take; err carries HNS's
// code and message.
func (r *Reporter) EndpointRejected(svc types.NamespacedName, port, frontend, ip string, err error) {
	r.service(svc, ReasonEndpointRejected, "backend %s of port %s (%s) is left out: HNS rejects its remote endpoint: %v", ip, port, frontend, err)
}

// EndpointsRejected is EndpointAddressesRefused for the backends whose
// remote endpoints HNS rejects as documents it will not take: HNS that
// takes no remote endpoint of the node leaves every remote backend out.
func (r *Reporter) EndpointsRejected(code string, raised int, svc types.NamespacedName, port, frontend, ip string, err error) {
	r.backendsLeftOut(ReasonEndpointRejected, "rejects", code, raised, svc, port, frontend, ip, err)
}

// backendsLeftOut raises on the Node the event of reason that stands for
// the backends left out past raised because HNS refuses (verb) their
// remote endpoints with code; the next is backend ip of port of svc.
func (r *Reporter) backendsLeftOut(reason, verb, code string, raised int, svc types.NamespacedName, port, frontend, ip string, err error) {
	r.rec.Eventf(NodeRef(r.nodeName), nil, v1.EventTypeWarning, reason, ActionSync,
		"load balancers leave out more than %d backends whose remote endpoints HNS %s with %s; the others are not raised on their Services while it lasts "+
			"(hnsproxy-diag lists the backends each load balancer lacks). The next, backend %s of port %s of %s (%s): %v",
		raised, verb, code, ip, port, svc, frontend, err)
}

// Starting is the birth cry on the Node.
func (r *Reporter) Starting() {
	r.rec.Eventf(NodeRef(r.nodeName), nil, v1.EventTypeNormal, ReasonStarting, ActionStart, "")
}

// FeatureUnavailable: the configuration asks for feature, which this node's HNS lacks.
func (r *Reporter) FeatureUnavailable(feature, why string) {
	r.rec.Eventf(NodeRef(r.nodeName), nil, v1.EventTypeWarning, ReasonHNSFeatureUnavailable, ActionCheck, "%s requested but unavailable: %s", feature, why)
}

// ServerFailed reports a healthz or metrics server that could not start (kube-proxy's reasons).
func (r *Reporter) ServerFailed(reason string, err error) {
	r.rec.Eventf(NodeRef(r.nodeName), nil, v1.EventTypeWarning, reason, ActionStart, "%s", fmt.Sprint(err))
}

// StateFileWriteFailed: writing the state file failed; until a write works,
// nothing new is made in HNS (an object hnsproxy cannot record as its own
// could leak), while deletes and in-place updates go on.
func (r *Reporter) StateFileWriteFailed(err error) {
	r.rec.Eventf(NodeRef(r.nodeName), nil, v1.EventTypeWarning, ReasonStateFileWriteFailed, ActionSave,
		"writing the state file failed; new load balancers and remote endpoints wait until a write works, which hnsproxy retries at each sync: %v", err)
}

// OSBugWorkaround: the node's Windows build has bug; what says what hnsproxy does about it.
func (r *Reporter) OSBugWorkaround(bug, what string) {
	r.rec.Eventf(NodeRef(r.nodeName), nil, v1.EventTypeWarning, ReasonOSBugWorkaround, ActionCheck, "Windows build has known bug %s: %s", bug, what)
}

// ConfigFileRejected: the --config file at path now holds a configuration
// hnsproxy would not start with (err); it runs on with the one it started
// with rather than exit into a restart that fails.
func (r *Reporter) ConfigFileRejected(path string, err error) {
	r.rec.Eventf(NodeRef(r.nodeName), nil, v1.EventTypeWarning, ReasonConfigFileRejected, ActionRead,
		"the configuration file %s changed, but hnsproxy would not start with it; it runs on with the configuration it started with and restarts once the file is fixed: %v", path, err)
}
