package remote

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// codeFail is E_FAIL, for failures that carry no HNS code of their own.
const codeFail hnslb.ErrorCode = 0x80004005

// maxBody bounds request bodies; the largest documents (load balancers
// with 1024 backends, trace requests with peers' snapshots) stay far below.
const maxBody = 64 << 20

// Extras are the simulator's diagnostics next to the HNS API. Nil functions
// answer "not implemented".
type Extras struct {
	// Node describes the served node, for /node and as the local node of traces.
	Node NodeInfo
	// Dump returns every object without going through the client (so dumps
	// are neither counted nor faulted); nil lists through the client.
	Dump func() *hnslb.Snapshot
	// LoadBalancersOn returns the load balancers on one frontend VIP, as
	// Dump does; nil filters a whole dump.
	LoadBalancersOn func(vip string) []hnslb.LoadBalancer
	// Stats returns operation counters as a JSON-able value.
	Stats func() any
	// Trace traces a packet through self and req.Peers; the result is JSON-able.
	Trace func(ctx context.Context, req TraceRequest, self PeerNode) (any, error)
	// SetFaults changes injected faults, latency, or starts a restart window.
	SetFaults func(FaultsRequest) error
	// SetRemoteSubnets replaces a network's RemoteSubnetRoute policies.
	SetRemoteSubnets func(RemoteSubnetsRequest) error
	// SetEcho changes how HNS answers (echo.go).
	SetEcho func(EchoRequest) error
	// ApplyEndpointPolicies writes a policy agent's ACLs onto an endpoint
	// (agentpolicy.go).
	ApplyEndpointPolicies func(EndpointPoliciesRequest) error
}

// NewServer serves c's HNS API and x's diagnostics.
func NewServer(c hnslb.Client, x Extras) http.Handler {
	s := &server{c: c, x: x}
	m := http.NewServeMux()
	m.HandleFunc("GET "+pathVersion, s.version)
	m.HandleFunc("GET "+pathOSBuild, s.osBuild)
	m.HandleFunc("GET "+pathInstance, s.serviceInstance)

	m.HandleFunc("GET "+pathNetworks, list("ListNetworks", c.ListNetworks))
	m.HandleFunc("GET "+pathNetworks+"/byname", get("GetNetworkByName", c.GetNetworkByName, queryName))
	m.HandleFunc("GET "+pathNetworks+"/{id}", get("GetNetworkByID", c.GetNetworkByID, pathID))
	m.HandleFunc("POST "+pathNetworks, create("CreateNetwork", c.CreateNetwork))
	m.HandleFunc("DELETE "+pathNetworks+"/{id}", remove("DeleteNetwork", c.DeleteNetwork))
	m.HandleFunc("GET "+pathNetworks+"/{id}/endpoints", get("ListEndpointsOfNetwork", nonNilList(c.ListEndpointsOfNetwork), pathID))
	m.HandleFunc("POST "+pathNetworks+"/{id}/endpoints", createIn("CreateEndpoint", c.CreateEndpoint))

	m.HandleFunc("GET "+pathEndpoints, list("ListEndpoints", c.ListEndpoints))
	m.HandleFunc("GET "+pathEndpoints+"/byname", get("GetEndpointByName", c.GetEndpointByName, queryName))
	m.HandleFunc("GET "+pathEndpoints+"/{id}", get("GetEndpointByID", c.GetEndpointByID, pathID))
	m.HandleFunc("DELETE "+pathEndpoints+"/{id}", remove("DeleteEndpoint", c.DeleteEndpoint))

	m.HandleFunc("GET "+pathNamespaces, list("ListNamespaces", c.ListNamespaces))
	m.HandleFunc("GET "+pathNamespaces+"/{id}", get("GetNamespaceByID", c.GetNamespaceByID, pathID))
	m.HandleFunc("POST "+pathNamespaces, create("CreateNamespace", c.CreateNamespace))
	m.HandleFunc("DELETE "+pathNamespaces+"/{id}", remove("DeleteNamespace", c.DeleteNamespace))
	m.HandleFunc("PUT "+pathNamespaces+"/{id}/endpoints/{eid}", namespaceEndpoint("AddNamespaceEndpoint", c.AddNamespaceEndpoint))
	m.HandleFunc("DELETE "+pathNamespaces+"/{id}/endpoints/{eid}", namespaceEndpoint("RemoveNamespaceEndpoint", c.RemoveNamespaceEndpoint))

	m.HandleFunc("GET "+pathLoadBalancers, list("ListLoadBalancers", c.ListLoadBalancers))
	m.HandleFunc("GET "+pathLoadBalancers+"/{id}", get("GetLoadBalancerByID", c.GetLoadBalancerByID, pathID))
	m.HandleFunc("POST "+pathLoadBalancers, create("CreateLoadBalancer", c.CreateLoadBalancer))
	m.HandleFunc("PUT "+pathLoadBalancers+"/{id}", createIn("UpdateLoadBalancer", c.UpdateLoadBalancer))
	m.HandleFunc("DELETE "+pathLoadBalancers+"/{id}", remove("DeleteLoadBalancer", c.DeleteLoadBalancer))

	m.HandleFunc("GET "+pathDump, s.dump)
	m.HandleFunc("GET "+pathStats, s.stats)
	m.HandleFunc("GET "+pathNode, s.node)
	m.HandleFunc("POST "+pathTrace, s.trace)
	m.HandleFunc("POST "+pathFaults, s.faults)
	m.HandleFunc("POST "+pathRemoteSubnets, s.remoteSubnets)
	m.HandleFunc("POST "+pathEcho, s.echo)
	m.HandleFunc("POST "+pathEndpointPolicies, s.endpointPolicies)
	return m
}

type server struct {
	c hnslb.Client
	x Extras
}

// reply writes v as JSON, or err as a wire error.
func reply(w http.ResponseWriter, op string, v any, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		we := wireError{Op: op, Code: codeFail, Message: err.Error()}
		var he *hnslb.Error
		if errors.As(err, &he) {
			we = wireError{Op: he.Op, Code: he.Code, Message: he.Message}
		}
		w.WriteHeader(httpStatus(err))
		_ = json.NewEncoder(w).Encode(we)
		return
	}
	if v == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

// bodyReadTimeout bounds how long a request body may take to arrive once
// its read began, so a client that stops mid-upload gives its body slot
// back; the largest body over a local socket takes a fraction of it.
var bodyReadTimeout = time.Minute

// bodySlots bounds how many request bodies are read and decoded at once, so
// parallel large bodies cost at most bodySlots*maxBody (plus decoding), not
// one maxBody per connection.
var bodySlots = make(chan struct{}, 2)

// decode reads a JSON body into out; a bad document is HNS's invalid parameter.
func decode(w http.ResponseWriter, r *http.Request, op string, out any) error {
	select {
	case bodySlots <- struct{}{}:
		defer func() { <-bodySlots }()
	case <-r.Context().Done():
		return hnslb.NewError(op, hnslb.CodeInvalidParameter, "read request: %v", r.Context().Err())
	}
	// Both wires support it (frames: framesWriter); a recorder in tests does not.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		return hnslb.NewError(op, hnslb.CodeInvalidParameter, "read request: %v", err)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return hnslb.NewError(op, hnslb.CodeInvalidParameter, "decode request: %v", err)
	}
	return nil
}

func notImplemented(op string) error {
	return hnslb.NewError(op, hnslb.CodeNotImplemented, "%s is not served here", op)
}

func (s *server) version(w http.ResponseWriter, r *http.Request) {
	v, err := s.c.Version(r.Context())
	reply(w, "Version", v, err)
}

func (s *server) osBuild(w http.ResponseWriter, r *http.Request) {
	b, err := s.c.OSBuild(r.Context())
	reply(w, "OSBuild", b, err)
}

func (s *server) serviceInstance(w http.ResponseWriter, r *http.Request) {
	inst, err := s.c.ServiceInstance(r.Context())
	reply(w, "ServiceInstance", inst, err)
}

// Handlers over hnslb.Client methods, by shape.

func pathID(r *http.Request) string    { return segmentID(r.PathValue("id")) }
func queryName(r *http.Request) string { return r.URL.Query().Get("name") }

// list serves a List call; empty lists travel as [] rather than null.
func list[T any](op string, f func(context.Context) ([]T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := f(r.Context())
		reply(w, op, nonNil(v), err)
	}
}

// get serves a lookup by a key taken from the request.
func get[R any](op string, f func(context.Context, string) (R, error), key func(*http.Request) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := f(r.Context(), key(r))
		reply(w, op, v, err)
	}
}

func nonNilList[T any](f func(context.Context, string) ([]T, error)) func(context.Context, string) ([]T, error) {
	return func(ctx context.Context, id string) ([]T, error) {
		v, err := f(ctx, id)
		return nonNil(v), err
	}
}

// create serves a Create call with the request's document.
func create[T any](op string, f func(context.Context, *T) (*T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		withDocument(w, r, op, f)
	}
}

// createIn serves a call on the object {id} names with the request's document.
func createIn[T any](op string, f func(context.Context, string, *T) (*T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		withDocument(w, r, op, func(ctx context.Context, doc *T) (*T, error) { return f(ctx, pathID(r), doc) })
	}
}

// withDocument decodes the request's HNS document and replies with what do makes of it.
func withDocument[T, R any](w http.ResponseWriter, r *http.Request, op string, do func(context.Context, *T) (R, error)) {
	var doc T
	if err := decode(w, r, op, &doc); err != nil {
		reply(w, op, nil, err)
		return
	}
	v, err := do(r.Context(), &doc)
	reply(w, op, v, err)
}

func remove(op string, f func(context.Context, string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		reply(w, op, nil, f(r.Context(), pathID(r)))
	}
}

func namespaceEndpoint(op string, f func(ctx context.Context, namespaceID, endpointID string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		reply(w, op, nil, f(r.Context(), pathID(r), segmentID(r.PathValue("eid"))))
	}
}

func (s *server) snapshot(ctx context.Context) (*hnslb.Snapshot, error) {
	if s.x.Dump != nil {
		return s.x.Dump(), nil
	}
	return hnslb.TakeSnapshot(ctx, s.c)
}

// dump answers every object, or with ?frontend=VIP only the load
// balancers on that frontend: a cheap look for tools that follow one
// Service while HNS replaces its load balancer (a new ID each time).
func (s *server) dump(w http.ResponseWriter, r *http.Request) {
	vip := r.URL.Query().Get("frontend")
	if vip != "" && s.x.LoadBalancersOn != nil {
		reply(w, "Dump", &hnslb.Snapshot{LoadBalancers: s.x.LoadBalancersOn(vip)}, nil)
		return
	}
	v, err := s.snapshot(r.Context())
	if vip != "" && err == nil {
		v = &hnslb.Snapshot{LoadBalancers: slices.DeleteFunc(v.LoadBalancers, func(lb hnslb.LoadBalancer) bool {
			return !slices.Contains(lb.FrontendVIPs, vip)
		})}
	}
	reply(w, "Dump", v, err)
}

func (s *server) stats(w http.ResponseWriter, r *http.Request) {
	if s.x.Stats == nil {
		reply(w, "Stats", nil, notImplemented("Stats"))
		return
	}
	reply(w, "Stats", s.x.Stats(), nil)
}

func (s *server) node(w http.ResponseWriter, r *http.Request) {
	reply(w, "Node", s.x.Node, nil)
}

func (s *server) trace(w http.ResponseWriter, r *http.Request) {
	if s.x.Trace == nil {
		reply(w, "Trace", nil, notImplemented("Trace"))
		return
	}
	var req TraceRequest
	if err := decode(w, r, "Trace", &req); err != nil {
		reply(w, "Trace", nil, err)
		return
	}
	snap, err := s.snapshot(r.Context())
	if err != nil {
		reply(w, "Trace", nil, err)
		return
	}
	v, err := s.x.Trace(r.Context(), req, PeerNode{NodeInfo: s.x.Node, HNS: snap})
	if err != nil {
		// The model refuses questions it cannot answer: a bad request.
		err = hnslb.NewError("Trace", hnslb.CodeInvalidParameter, "%v", err)
	}
	reply(w, "Trace", v, err)
}

func (s *server) faults(w http.ResponseWriter, r *http.Request) {
	serveSetter(w, r, "SetFaults", s.x.SetFaults)
}

func (s *server) remoteSubnets(w http.ResponseWriter, r *http.Request) {
	serveSetter(w, r, "SetRemoteSubnets", s.x.SetRemoteSubnets)
}

// serveSetter decodes a request and hands it to set; HNS errors keep their
// code, others are a bad request.
func serveSetter[T any](w http.ResponseWriter, r *http.Request, op string, set func(T) error) {
	if set == nil {
		reply(w, op, nil, notImplemented(op))
		return
	}
	var req T
	if err := decode(w, r, op, &req); err != nil {
		reply(w, op, nil, err)
		return
	}
	if v, ok := any(req).(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			reply(w, op, nil, hnslb.NewError(op, hnslb.CodeInvalidParameter, "%v", err))
			return
		}
	}
	err := set(req)
	if _, ok := hnslb.CodeOf(err); err != nil && !ok {
		err = hnslb.NewError(op, hnslb.CodeInvalidParameter, "%v", err)
	}
	reply(w, op, nil, err)
}

// nonNil makes empty lists travel as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
