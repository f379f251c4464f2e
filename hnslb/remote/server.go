package remote

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

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
	// Stats returns operation counters as a JSON-able value.
	Stats func() any
	// Trace traces a packet through self and req.Peers; the result is JSON-able.
	Trace func(ctx context.Context, req TraceRequest, self PeerNode) (any, error)
	// SetFaults changes injected faults, latency, or starts a restart window.
	SetFaults func(FaultsRequest) error
	// SetRemoteSubnets replaces a network's RemoteSubnetRoute policies.
	SetRemoteSubnets func(RemoteSubnetsRequest) error
}

// NewServer serves c's HNS API and x's diagnostics.
func NewServer(c hnslb.Client, x Extras) http.Handler {
	s := &server{c: c, x: x}
	m := http.NewServeMux()
	m.HandleFunc("GET "+pathVersion, s.version)

	m.HandleFunc("GET "+pathNetworks, s.listNetworks)
	m.HandleFunc("GET "+pathNetworks+"/byname", s.getNetworkByName)
	m.HandleFunc("GET "+pathNetworks+"/{id}", s.getNetwork)
	m.HandleFunc("POST "+pathNetworks, s.createNetwork)
	m.HandleFunc("DELETE "+pathNetworks+"/{id}", s.deleteNetwork)
	m.HandleFunc("GET "+pathNetworks+"/{id}/endpoints", s.listEndpointsOfNetwork)
	m.HandleFunc("POST "+pathNetworks+"/{id}/endpoints", s.createEndpoint)

	m.HandleFunc("GET "+pathEndpoints, s.listEndpoints)
	m.HandleFunc("GET "+pathEndpoints+"/byname", s.getEndpointByName)
	m.HandleFunc("GET "+pathEndpoints+"/{id}", s.getEndpoint)
	m.HandleFunc("DELETE "+pathEndpoints+"/{id}", s.deleteEndpoint)

	m.HandleFunc("GET "+pathNamespaces, s.listNamespaces)
	m.HandleFunc("GET "+pathNamespaces+"/{id}", s.getNamespace)
	m.HandleFunc("POST "+pathNamespaces, s.createNamespace)
	m.HandleFunc("DELETE "+pathNamespaces+"/{id}", s.deleteNamespace)
	m.HandleFunc("PUT "+pathNamespaces+"/{id}/endpoints/{eid}", s.addNamespaceEndpoint)
	m.HandleFunc("DELETE "+pathNamespaces+"/{id}/endpoints/{eid}", s.removeNamespaceEndpoint)

	m.HandleFunc("GET "+pathLoadBalancers, s.listLoadBalancers)
	m.HandleFunc("GET "+pathLoadBalancers+"/{id}", s.getLoadBalancer)
	m.HandleFunc("POST "+pathLoadBalancers, s.createLoadBalancer)
	m.HandleFunc("PUT "+pathLoadBalancers+"/{id}", s.updateLoadBalancer)
	m.HandleFunc("DELETE "+pathLoadBalancers+"/{id}", s.deleteLoadBalancer)

	m.HandleFunc("GET "+pathDump, s.dump)
	m.HandleFunc("GET "+pathStats, s.stats)
	m.HandleFunc("GET "+pathNode, s.node)
	m.HandleFunc("POST "+pathTrace, s.trace)
	m.HandleFunc("POST "+pathFaults, s.faults)
	m.HandleFunc("POST "+pathRemoteSubnets, s.remoteSubnets)
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

// decode reads a JSON body into out; a bad document is HNS's invalid parameter.
func decode(r *http.Request, op string, out any) error {
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

func (s *server) listNetworks(w http.ResponseWriter, r *http.Request) {
	v, err := s.c.ListNetworks(r.Context())
	reply(w, "ListNetworks", nonNil(v), err)
}

func (s *server) getNetworkByName(w http.ResponseWriter, r *http.Request) {
	v, err := s.c.GetNetworkByName(r.Context(), r.URL.Query().Get("name"))
	reply(w, "GetNetworkByName", v, err)
}

func (s *server) getNetwork(w http.ResponseWriter, r *http.Request) {
	v, err := s.c.GetNetworkByID(r.Context(), r.PathValue("id"))
	reply(w, "GetNetworkByID", v, err)
}

func (s *server) createNetwork(w http.ResponseWriter, r *http.Request) {
	var n hnslb.Network
	if err := decode(r, "CreateNetwork", &n); err != nil {
		reply(w, "CreateNetwork", nil, err)
		return
	}
	v, err := s.c.CreateNetwork(r.Context(), &n)
	reply(w, "CreateNetwork", v, err)
}

func (s *server) deleteNetwork(w http.ResponseWriter, r *http.Request) {
	reply(w, "DeleteNetwork", nil, s.c.DeleteNetwork(r.Context(), r.PathValue("id")))
}

func (s *server) listEndpointsOfNetwork(w http.ResponseWriter, r *http.Request) {
	v, err := s.c.ListEndpointsOfNetwork(r.Context(), r.PathValue("id"))
	reply(w, "ListEndpointsOfNetwork", nonNil(v), err)
}

func (s *server) createEndpoint(w http.ResponseWriter, r *http.Request) {
	var e hnslb.Endpoint
	if err := decode(r, "CreateEndpoint", &e); err != nil {
		reply(w, "CreateEndpoint", nil, err)
		return
	}
	v, err := s.c.CreateEndpoint(r.Context(), r.PathValue("id"), &e)
	reply(w, "CreateEndpoint", v, err)
}

func (s *server) listEndpoints(w http.ResponseWriter, r *http.Request) {
	v, err := s.c.ListEndpoints(r.Context())
	reply(w, "ListEndpoints", nonNil(v), err)
}

func (s *server) getEndpointByName(w http.ResponseWriter, r *http.Request) {
	v, err := s.c.GetEndpointByName(r.Context(), r.URL.Query().Get("name"))
	reply(w, "GetEndpointByName", v, err)
}

func (s *server) getEndpoint(w http.ResponseWriter, r *http.Request) {
	v, err := s.c.GetEndpointByID(r.Context(), r.PathValue("id"))
	reply(w, "GetEndpointByID", v, err)
}

func (s *server) deleteEndpoint(w http.ResponseWriter, r *http.Request) {
	reply(w, "DeleteEndpoint", nil, s.c.DeleteEndpoint(r.Context(), r.PathValue("id")))
}

func (s *server) listNamespaces(w http.ResponseWriter, r *http.Request) {
	v, err := s.c.ListNamespaces(r.Context())
	reply(w, "ListNamespaces", nonNil(v), err)
}

func (s *server) getNamespace(w http.ResponseWriter, r *http.Request) {
	v, err := s.c.GetNamespaceByID(r.Context(), r.PathValue("id"))
	reply(w, "GetNamespaceByID", v, err)
}

func (s *server) createNamespace(w http.ResponseWriter, r *http.Request) {
	var ns hnslb.Namespace
	if err := decode(r, "CreateNamespace", &ns); err != nil {
		reply(w, "CreateNamespace", nil, err)
		return
	}
	v, err := s.c.CreateNamespace(r.Context(), &ns)
	reply(w, "CreateNamespace", v, err)
}

func (s *server) deleteNamespace(w http.ResponseWriter, r *http.Request) {
	reply(w, "DeleteNamespace", nil, s.c.DeleteNamespace(r.Context(), r.PathValue("id")))
}

func (s *server) addNamespaceEndpoint(w http.ResponseWriter, r *http.Request) {
	err := s.c.AddNamespaceEndpoint(r.Context(), r.PathValue("id"), r.PathValue("eid"))
	reply(w, "AddNamespaceEndpoint", nil, err)
}

func (s *server) removeNamespaceEndpoint(w http.ResponseWriter, r *http.Request) {
	err := s.c.RemoveNamespaceEndpoint(r.Context(), r.PathValue("id"), r.PathValue("eid"))
	reply(w, "RemoveNamespaceEndpoint", nil, err)
}

func (s *server) listLoadBalancers(w http.ResponseWriter, r *http.Request) {
	v, err := s.c.ListLoadBalancers(r.Context())
	reply(w, "ListLoadBalancers", nonNil(v), err)
}

func (s *server) getLoadBalancer(w http.ResponseWriter, r *http.Request) {
	v, err := s.c.GetLoadBalancerByID(r.Context(), r.PathValue("id"))
	reply(w, "GetLoadBalancerByID", v, err)
}

func (s *server) createLoadBalancer(w http.ResponseWriter, r *http.Request) {
	var lb hnslb.LoadBalancer
	if err := decode(r, "CreateLoadBalancer", &lb); err != nil {
		reply(w, "CreateLoadBalancer", nil, err)
		return
	}
	v, err := s.c.CreateLoadBalancer(r.Context(), &lb)
	reply(w, "CreateLoadBalancer", v, err)
}

func (s *server) updateLoadBalancer(w http.ResponseWriter, r *http.Request) {
	var lb hnslb.LoadBalancer
	if err := decode(r, "UpdateLoadBalancer", &lb); err != nil {
		reply(w, "UpdateLoadBalancer", nil, err)
		return
	}
	v, err := s.c.UpdateLoadBalancer(r.Context(), r.PathValue("id"), &lb)
	reply(w, "UpdateLoadBalancer", v, err)
}

func (s *server) deleteLoadBalancer(w http.ResponseWriter, r *http.Request) {
	reply(w, "DeleteLoadBalancer", nil, s.c.DeleteLoadBalancer(r.Context(), r.PathValue("id")))
}

func (s *server) snapshot(ctx context.Context) (*hnslb.Snapshot, error) {
	if s.x.Dump != nil {
		return s.x.Dump(), nil
	}
	return hnslb.TakeSnapshot(ctx, s.c)
}

func (s *server) dump(w http.ResponseWriter, r *http.Request) {
	v, err := s.snapshot(r.Context())
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
	if err := decode(r, "Trace", &req); err != nil {
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
	if err := decode(r, op, &req); err != nil {
		reply(w, op, nil, err)
		return
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
