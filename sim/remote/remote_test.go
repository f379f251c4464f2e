package remote_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
	"github.com/hnsproxy/hnsproxy/sim/remote/remotetest"
)

// socketPath is a short path: unix socket paths are limited to ~100 bytes.
func socketPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "remote")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "hns.sock")
}

// serveSim serves a fresh simulator with x and returns it and a client.
func serveSim(t *testing.T, x remote.Extras) (*sim.HNS, *remote.Client, string) {
	t.Helper()
	profile, err := sim.ProfileByName(sim.ProfileWS2025) // supports ModifyLoadBalancer
	if err != nil {
		t.Fatal(err)
	}
	h := sim.New(sim.Options{Profile: profile, Seed: 7})
	if x.Dump == nil {
		x.Dump = h.Snapshot
	}
	path := remotetest.Serve(t, remote.NewServer(h, x))
	c := remote.NewClient(path)
	t.Cleanup(c.Close)
	return h, c, path
}

func l2bridge(name string) *hnslb.Network {
	return &hnslb.Network{Name: name, Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}}
}

func TestRoundTripEveryObject(t *testing.T) {
	ctx := context.Background()
	h, c, _ := serveSim(t, remote.Extras{})

	v, err := c.Version(ctx)
	if err != nil || v != h.Profile().Version {
		t.Fatalf("Version = %v, %v; want %v", v, err, h.Profile().Version)
	}
	n, err := c.CreateNetwork(ctx, l2bridge("cbr0"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetNetworkByName(ctx, "cbr0"); err != nil || got.ID != n.ID {
		t.Fatalf("GetNetworkByName = %+v, %v", got, err)
	}
	if got, err := c.GetNetworkByID(ctx, n.ID); err != nil || got.Name != "cbr0" {
		t.Fatalf("GetNetworkByID = %+v, %v", got, err)
	}
	ep, err := c.CreateEndpoint(ctx, n.ID, &hnslb.Endpoint{Name: "pod a/b?c", IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5", PrefixLength: 24}},
		Policies: []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{Exceptions: []string{"10.244.0.0/16"}})}})
	if err != nil {
		t.Fatal(err)
	}
	// A name with URL metacharacters survives the query string.
	if got, err := c.GetEndpointByName(ctx, "pod a/b?c"); err != nil || got.ID != ep.ID || len(got.Policies) != 1 {
		t.Fatalf("GetEndpointByName = %+v, %v", got, err)
	}
	ns, err := c.CreateNamespace(ctx, &hnslb.Namespace{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetEndpointByID(ctx, ep.ID); err != nil || got.HostComputeNamespace != ns.ID {
		t.Fatalf("endpoint after attach = %+v, %v", got, err)
	}
	lb, err := c.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{HostComputeEndpoints: []string{ep.ID}, FrontendVIPs: []string{"10.96.0.10"},
		PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 8080, ExternalPort: 80}}, SchemaVersion: hnslb.V2})
	if err != nil {
		t.Fatal(err)
	}
	lb.PortMappings[0].InternalPort = 9090
	if up, err := c.UpdateLoadBalancer(ctx, lb.ID, lb); err != nil || up.PortMappings[0].InternalPort != 9090 {
		t.Fatalf("UpdateLoadBalancer = %+v, %v", up, err)
	}
	if got, err := c.GetLoadBalancerByID(ctx, lb.ID); err != nil || got.PortMappings[0].InternalPort != 9090 {
		t.Fatalf("load balancer after update = %+v, %v", got, err)
	}
	lists := map[string]func() (int, error){
		"networks":           func() (int, error) { l, err := c.ListNetworks(ctx); return len(l), err },
		"endpoints":          func() (int, error) { l, err := c.ListEndpoints(ctx); return len(l), err },
		"endpoints of cbr0":  func() (int, error) { l, err := c.ListEndpointsOfNetwork(ctx, n.ID); return len(l), err },
		"namespaces":         func() (int, error) { l, err := c.ListNamespaces(ctx); return len(l), err },
		"load balancers":     func() (int, error) { l, err := c.ListLoadBalancers(ctx); return len(l), err },
		"lb by id (as list)": func() (int, error) { _, err := c.GetLoadBalancerByID(ctx, lb.ID); return 1, err },
	}
	for name, f := range lists {
		if got, err := f(); err != nil || got != 1 {
			t.Errorf("%s: %d, %v; want 1", name, got, err)
		}
	}
	snap, err := c.Dump(ctx)
	if err != nil || len(snap.Endpoints) != 1 || len(snap.LoadBalancers) != 1 || len(snap.Namespaces) != 1 {
		t.Fatalf("Dump = %+v, %v", snap, err)
	}
	for vip, want := range map[string]int{lb.FrontendVIPs[0]: 1, "10.96.99.99": 0} {
		if on, err := c.LoadBalancersOn(ctx, vip); err != nil || len(on) != want || (want == 1 && on[0].ID != lb.ID) {
			t.Errorf("load balancers on %s: %+v, %v; want %d", vip, on, err, want)
		}
	}
	if err := c.RemoveNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"lb":        c.DeleteLoadBalancer(ctx, lb.ID),
		"namespace": c.DeleteNamespace(ctx, ns.ID),
	} {
		if err != nil {
			t.Errorf("delete %s: %v", what, err)
		}
	}
	if err := c.DeleteEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteNetwork(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	if l, err := c.ListNetworks(ctx); err != nil || len(l) != 0 {
		t.Fatalf("networks after delete: %v, %v", l, err)
	}
}

func TestErrorsKeepTheirCodes(t *testing.T) {
	ctx := context.Background()
	h, c, _ := serveSim(t, remote.Extras{})
	n, err := c.CreateNetwork(ctx, l2bridge("cbr0"))
	if err != nil {
		t.Fatal(err)
	}
	ep, err := c.CreateEndpoint(ctx, n.ID, &hnslb.Endpoint{Name: "a", IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5"}}})
	if err != nil {
		t.Fatal(err)
	}
	// Same frontend (VIP, protocol, port), different target port: a conflict.
	frontend := func(target uint16) *hnslb.LoadBalancer {
		return &hnslb.LoadBalancer{HostComputeEndpoints: []string{ep.ID}, FrontendVIPs: []string{"10.96.0.10"},
			PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: target, ExternalPort: 80}}, SchemaVersion: hnslb.V2}
	}
	if _, err := c.CreateLoadBalancer(ctx, frontend(80)); err != nil {
		t.Fatal(err)
	}

	_, err = c.GetNetworkByName(ctx, "nope")
	assertCode(t, "network by name", err, hnslb.CodeNetworkNotFound, hnslb.IsNotFound)
	_, err = c.GetEndpointByID(ctx, "8e3c07a1-07c2-4a5b-9d9b-9a5c2a3a0c11")
	assertCode(t, "endpoint by id", err, 0, hnslb.IsNotFound)
	_, err = c.CreateLoadBalancer(ctx, frontend(8080))
	assertCode(t, "duplicate frontend", err, hnslb.CodePortAlreadyExists, hnslb.IsPortAlreadyExists)
	_, err = c.CreateNetwork(ctx, l2bridge("cbr0"))
	assertCode(t, "duplicate network", err, hnslb.CodeNetworkAlreadyExists, hnslb.IsAlreadyExists)

	h.Restart(time.Hour)
	_, err = c.ListEndpoints(ctx)
	assertCode(t, "during restart", err, hnslb.CodeRPCServerUnavailable, hnslb.IsUnavailable)
	if hnslb.IsNotFound(err) {
		t.Errorf("unavailable must never read as not found: %v", err)
	}
	h.Restart(0)

	h.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteEndpoint: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidEndpoint}})
	assertCode(t, "injected", c.DeleteEndpoint(ctx, ep.ID), hnslb.CodeInvalidEndpoint, func(error) bool { return true })
}

// assertCode checks err is an *hnslb.Error (with code want unless 0) that pred accepts.
func assertCode(t *testing.T, what string, err error, want hnslb.ErrorCode, pred func(error) bool) {
	t.Helper()
	var he *hnslb.Error
	if !errors.As(err, &he) {
		t.Errorf("%s: got %T %v, want *hnslb.Error", what, err, err)
		return
	}
	if want != 0 && he.Code != want {
		t.Errorf("%s: code 0x%x, want 0x%x (%v)", what, uint32(he.Code), uint32(want), err)
	}
	if !pred(err) {
		t.Errorf("%s: %v does not satisfy its predicate", what, err)
	}
}

func TestUnreachableServerIsUnavailableNotNotFound(t *testing.T) {
	ctx := context.Background()
	path := socketPath(t)
	c := remote.NewClient(path) // nothing listens there
	_, err := c.GetEndpointByName(ctx, "x")
	assertCode(t, "missing socket", err, hnslb.CodeRPCServerUnavailable, hnslb.IsUnavailable)
	if hnslb.IsNotFound(err) {
		t.Fatalf("a missing server must not read as not found: %v", err)
	}

	// A socket file nobody listens on: connection refused.
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	err = c.DeleteEndpoint(ctx, "x")
	assertCode(t, "refused", err, hnslb.CodeRPCServerUnavailable, hnslb.IsUnavailable)

	// A cancelled context is the caller's doing, not HNS's.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.ListNetworks(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v, want context.Canceled", err)
	}
}

func TestForeignRepliesBecomeErrors(t *testing.T) {
	ctx := context.Background()
	path := socketPath(t)
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/version":
			http.Error(w, "upstream exploded", http.StatusBadGateway)
		case "/networks":
			fmt.Fprint(w, "not json")
		default:
			http.Error(w, "teapot", http.StatusTeapot)
		}
	})}
	go remote.Serve(srv, l)
	t.Cleanup(func() { srv.Close() })
	c := remote.NewClient(path)
	_, err = c.Version(ctx)
	assertCode(t, "5xx without HNS body", err, hnslb.CodeRPCServerUnavailable, hnslb.IsUnavailable)
	_, err = c.ListNetworks(ctx)
	assertCode(t, "undecodable reply", err, 0, func(e error) bool { return !hnslb.IsNotFound(e) })
	_, err = c.GetNamespaceByID(ctx, "x")
	assertCode(t, "4xx without HNS body", err, 0, func(e error) bool { return !hnslb.IsNotFound(e) && !hnslb.IsUnavailable(e) })
}

func TestConcurrentClients(t *testing.T) {
	ctx := context.Background()
	_, c, path := serveSim(t, remote.Extras{})
	n, err := c.CreateNetwork(ctx, l2bridge("cbr0"))
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := remote.NewClient(path) // separate processes have separate clients
			defer own.Close()
			for i := 0; i < each; i++ {
				ip := fmt.Sprintf("10.244.1.%d", 10+w*each+i)
				if _, err := own.CreateEndpoint(ctx, n.ID, &hnslb.Endpoint{Name: ip, IpConfigurations: []hnslb.IPConfig{{IpAddress: ip}}}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	eps, err := c.ListEndpoints(ctx)
	if err != nil || len(eps) != workers*each {
		t.Fatalf("endpoints: %d, %v; want %d", len(eps), err, workers*each)
	}
}

func TestExtras(t *testing.T) {
	ctx := context.Background()
	var gotFaults remote.FaultsRequest
	var gotTrace remote.TraceRequest
	var gotSelf remote.PeerNode
	_, c, _ := serveSim(t, remote.Extras{
		Node:  remote.NodeInfo{Name: "n1", IPs: []string{"192.168.0.1"}, NetworkName: "cbr0"},
		Stats: func() any { return map[string]int{"calls": 3} },
		Trace: func(_ context.Context, req remote.TraceRequest, self remote.PeerNode) (any, error) {
			if req.Protocol == "bogus" {
				return nil, errors.New("protocol bogus")
			}
			gotTrace, gotSelf = req, self
			return map[string]string{"outcome": "delivered"}, nil
		},
		SetFaults: func(r remote.FaultsRequest) error { gotFaults = r; return nil },
	})
	if _, err := c.CreateNetwork(ctx, l2bridge("cbr0")); err != nil {
		t.Fatal(err)
	}
	if info, err := c.Node(ctx); err != nil || info.Name != "n1" {
		t.Fatalf("Node = %+v, %v", info, err)
	}
	if s, err := c.Stats(ctx); err != nil || strings.TrimSpace(string(s)) != `{"calls":3}` {
		t.Fatalf("Stats = %s, %v", s, err)
	}
	peer := remote.PeerNode{NodeInfo: remote.NodeInfo{Name: "n2"}, HNS: &hnslb.Snapshot{}}
	if v, err := c.Trace(ctx, remote.TraceRequest{Src: "10.244.1.2", Dst: "10.244.2.2:80", Protocol: "tcp", Peers: []remote.PeerNode{peer}}); err != nil || strings.TrimSpace(string(v)) != `{"outcome":"delivered"}` {
		t.Fatalf("Trace = %s, %v", v, err)
	}
	if gotTrace.Dst != "10.244.2.2:80" || len(gotTrace.Peers) != 1 || gotTrace.Peers[0].Name != "n2" {
		t.Errorf("server saw trace request %+v", gotTrace)
	}
	if gotSelf.Name != "n1" || gotSelf.HNS == nil || len(gotSelf.HNS.Networks) != 1 {
		t.Errorf("server traced with self %+v", gotSelf)
	}
	_, err := c.Trace(ctx, remote.TraceRequest{Protocol: "bogus"})
	assertCode(t, "model refusal", err, hnslb.CodeInvalidParameter, hnslb.IsInvalidParameter)

	lat := remote.Duration(5 * time.Millisecond)
	if err := c.SetFaults(ctx, remote.FaultsRequest{ErrorRate: map[string]float64{"*": 0.5}, Restart: remote.Duration(time.Second), Latency: &lat}); err != nil {
		t.Fatal(err)
	}
	if gotFaults.ErrorRate["*"] != 0.5 || time.Duration(gotFaults.Restart) != time.Second || gotFaults.Latency == nil || *gotFaults.Latency != lat {
		t.Errorf("server saw faults %+v", gotFaults)
	}
	// Not configured: not implemented, never not found.
	err = c.SetRemoteSubnets(ctx, remote.RemoteSubnetsRequest{Network: "cbr0"})
	assertCode(t, "unserved extra", err, hnslb.CodeNotImplemented, hnslb.IsNotImplemented)
}

func TestListenSocketModeAndStaleSocket(t *testing.T) {
	path := socketPath(t)
	// A stale socket from a dead server is replaced.
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	l, err := remote.Listen(path)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want 0600", fi.Mode().Perm())
	}
	// A live one is not stolen.
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if _, err := remote.Listen(path); err == nil {
		t.Error("Listen on a live socket succeeded")
	}
	l.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("socket left after close: %v", err)
	}
}

// A look at one frontend's load balancers answers the same whether the
// simulator serves it directly or a whole dump is filtered.
func TestLoadBalancersOnOneFrontend(t *testing.T) {
	ctx := context.Background()
	for name, direct := range map[string]bool{"direct": true, "filtered dump": false} {
		t.Run(name, func(t *testing.T) {
			profile, err := sim.ProfileByName(sim.ProfileWS2025)
			if err != nil {
				t.Fatal(err)
			}
			h := sim.New(sim.Options{Profile: profile, Seed: 7})
			x := remote.Extras{Dump: h.Snapshot}
			if direct {
				x.LoadBalancersOn = h.LoadBalancersOn
			}
			c := remote.NewClient(remotetest.Serve(t, remote.NewServer(h, x)))
			defer c.Close()
			n, err := c.CreateNetwork(ctx, l2bridge("cbr0"))
			if err != nil {
				t.Fatal(err)
			}
			ep, err := c.CreateEndpoint(ctx, n.ID, &hnslb.Endpoint{Name: "e", IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5"}}, SchemaVersion: hnslb.V2})
			if err != nil {
				t.Fatal(err)
			}
			ids := map[string]string{}
			for _, vip := range []string{"10.96.0.10", "10.96.0.11"} {
				lb, err := c.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{HostComputeEndpoints: []string{ep.ID}, FrontendVIPs: []string{vip},
					PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 8080, ExternalPort: 80}}, SchemaVersion: hnslb.V2})
				if err != nil {
					t.Fatal(err)
				}
				ids[vip] = lb.ID
			}
			for vip, id := range map[string]string{"10.96.0.10": ids["10.96.0.10"], "10.96.0.11": ids["10.96.0.11"], "10.96.0.12": ""} {
				on, err := c.LoadBalancersOn(ctx, vip)
				if err != nil || (id == "" && len(on) != 0) || (id != "" && (len(on) != 1 || on[0].ID != id)) {
					t.Errorf("on %s: %+v, %v; want %q only", vip, on, err, id)
				}
			}
		})
	}
}

// The service instance travels as the simulator tells it: its restart
// count, and unavailable while a restart lasts.
func TestServiceInstanceOverTheSocket(t *testing.T) {
	ctx := context.Background()
	h, c, _ := serveSim(t, remote.Extras{})
	if inst, err := c.ServiceInstance(ctx); inst != "0" || err != nil {
		t.Fatalf("instance: %q, %v; want 0", inst, err)
	}
	h.Restart(time.Hour)
	if _, err := c.ServiceInstance(ctx); !hnslb.IsUnavailable(err) {
		t.Errorf("instance during a restart: %v; want unavailable", err)
	}
	h.Restart(0)
	if inst, err := c.ServiceInstance(ctx); inst != "1" || err != nil {
		t.Errorf("instance after a restart: %q, %v; want 1", inst, err)
	}
}
