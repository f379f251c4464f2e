package sim

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// run makes a fixed sequence of calls and records each outcome.
func runScript(h *HNS) []string {
	var out []string
	rec := func(err error) {
		c, _ := hnslb.CodeOf(err)
		out = append(out, fmt.Sprintf("%x", uint32(c)))
	}
	n, err := h.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge})
	rec(err)
	if err != nil {
		return out
	}
	for i := 0; i < 50; i++ {
		ep, err := h.CreateEndpoint(ctx, n.ID, endpointDoc(fmt.Sprintf("10.244.1.%d", i+2)))
		rec(err)
		if err != nil {
			continue
		}
		out = append(out, ep.ID)
		lb, err := h.CreateLoadBalancer(ctx, lbDoc(fmt.Sprintf("10.96.0.%d", i+2), 80, ep.ID))
		rec(err)
		if err == nil {
			out = append(out, lb.ID)
		}
		_, err = h.ListLoadBalancers(ctx)
		rec(err)
	}
	return out
}

func TestFaultsAreDeterministic(t *testing.T) {
	faults := Faults{
		ErrorRate: map[Op]float64{OpCreateLoadBalancer: 0.3, AnyOp: 0.1},
		Errors:    []hnslb.ErrorCode{hnslb.CodeRPCServerUnavailable, hnslb.CodeTimeout},
	}
	mk := func(seed int64) *HNS {
		h := New(Options{Seed: seed})
		h.SetFaults(faults)
		return h
	}
	a, b := runScript(mk(42)), runScript(mk(42))
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("same seed, different runs:\n%v\n%v", a, b)
	}
	if c := runScript(mk(43)); fmt.Sprint(a) == fmt.Sprint(c) {
		t.Error("different seeds gave identical runs")
	}
	h := mk(42)
	runScript(h)
	c := h.Counters()
	failed := c.Count(OpCreateLoadBalancer) - c.CountResult(OpCreateLoadBalancer, ResultOK)
	if failed == 0 || c.CountResult(OpCreateLoadBalancer, "Timeout")+c.CountResult(OpCreateLoadBalancer, "RPCServerUnavailable") != failed {
		t.Errorf("create results %v", c.Calls[OpCreateLoadBalancer])
	}
	// A failed create created nothing: state holds exactly the successes.
	if got := len(h.Snapshot().LoadBalancers); got != c.CountResult(OpCreateLoadBalancer, ResultOK) {
		t.Errorf("%d load balancers, %d successful creates", got, c.CountResult(OpCreateLoadBalancer, ResultOK))
	}
	if got := len(h.Snapshot().Endpoints); got != c.CountResult(OpCreateEndpoint, ResultOK) {
		t.Errorf("%d endpoints, %d successful creates", got, c.CountResult(OpCreateEndpoint, ResultOK))
	}
}

// Faults draw from their own generator: IDs do not depend on them.
func TestFaultsDoNotShiftIDs(t *testing.T) {
	clean := New(Options{Seed: 7})
	faulty := New(Options{Seed: 7})
	faulty.SetFaults(Faults{ErrorRate: map[Op]float64{OpListNetworks: 0.5}})
	for i := 0; i < 20; i++ {
		_, _ = faulty.ListNetworks(ctx) // only the fault draws matter
	}
	a, _ := clean.CreateNamespace(ctx, nil)
	b, _ := faulty.CreateNamespace(ctx, nil)
	if a.ID != b.ID {
		t.Errorf("IDs differ: %s vs %s", a.ID, b.ID)
	}
}

func TestFaultRateOneFailsEveryCallOfThatOp(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	h.SetFaults(Faults{ErrorRate: map[Op]float64{OpCreateNetwork: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeManagerStopped}})
	_, err := h.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge})
	wantCode(t, err, hnslb.CodeManagerStopped)
	if _, err := h.ListNetworks(ctx); err != nil {
		t.Errorf("other op failed: %v", err)
	}
	h.SetFaults(Faults{})
	mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
}

func TestRestart(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p, _ := ProfileByName(ProfileWS2022)
	h := New(Options{Profile: p, Clock: clk})
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	backend := sharedBackend(t, h)
	lb, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, backend))
	if err != nil {
		t.Fatal(err)
	}
	if inst, err := h.ServiceInstance(ctx); inst != "0" || err != nil {
		t.Fatalf("instance before any restart: %q, %v", inst, err)
	}
	h.Restart(10 * time.Second)
	if _, err := h.ServiceInstance(ctx); !hnslb.IsUnavailable(err) {
		t.Errorf("instance during the restart: %v; want unavailable (the service is not running)", err)
	}
	for name, err := range map[string]error{
		"get":    func() error { _, err := h.GetLoadBalancerByID(ctx, lb.ID); return err }(),
		"delete": h.DeleteLoadBalancer(ctx, lb.ID),
		"list":   func() error { _, err := h.ListNetworks(ctx); return err }(),
		"create": func() error { _, err := h.CreateEndpoint(ctx, n.ID, endpointDoc("10.244.1.5")); return err }(),
	} {
		if !hnslb.IsUnavailable(err) || hnslb.IsNotFound(err) {
			t.Errorf("%s during restart: %v (unavailable %v, not found %v)", name, err, hnslb.IsUnavailable(err), hnslb.IsNotFound(err))
		}
	}
	clk.SetTime(clk.Now().Add(10 * time.Second))
	got, err := h.GetLoadBalancerByID(ctx, lb.ID)
	if err != nil || got.ID != lb.ID {
		t.Fatalf("after restart: %+v %v", got, err)
	}
	h.Restart(0) // ends a window: no restart of its own
	if inst, err := h.ServiceInstance(ctx); inst != "1" || err != nil {
		t.Errorf("instance after one restart: %q, %v; want 1", inst, err)
	}
	if len(h.Snapshot().Endpoints) != 1 {
		t.Error("a call during the restart changed state")
	}
	if c := h.Counters(); c.CountResult(OpDeleteLoadBalancer, "RPCServerUnavailable") != 1 {
		t.Errorf("counters %v", c.Calls)
	}
	// A client that took "unavailable" for "gone" and re-creates the same
	// load balancer meets 0xb7 (kubernetes/kubernetes#139519).
	_, err = h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, backend))
	wantCode(t, err, hnslb.CodeAlreadyExists)
}

// TestRestartLosses: a restart drops what its variant names, at once, and
// keeps the rest; networks and namespaces always stay, and a namespace
// loses its attachment to a dropped endpoint.
func TestRestartLosses(t *testing.T) {
	for _, tc := range []struct {
		loss                   RestartLoss
		lbs, local, remote, ns int // what is left after the restart; ns: attachments
	}{
		{RestartKeepsAll, 1, 1, 1, 1},
		{RestartLosesLoadBalancers, 0, 1, 1, 1},
		{RestartLosesRemoteEndpoints, 0, 1, 0, 1},
		{RestartLosesEndpoints, 0, 0, 0, 0},
	} {
		t.Run(cmp.Or(string(tc.loss), "keeps-all"), func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			p, _ := ProfileByName(ProfileWS2022)
			h := New(Options{Profile: p, Clock: clk})
			n := mustNetwork(t, h, "flannel.4096", hnslb.NetworkTypeOverlay)
			local := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
			remote := mustEndpoint(t, h, n.ID, remoteDoc("10.244.2.7", "192.168.1.12"))
			ns, err := h.CreateNamespace(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.AddNamespaceEndpoint(ctx, ns.ID, local.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, local.ID, remote.ID)); err != nil {
				t.Fatal(err)
			}
			if err := h.RestartLosing(10*time.Second, tc.loss); err != nil {
				t.Fatal(err)
			}
			if _, err := h.ListLoadBalancers(ctx); !hnslb.IsUnavailable(err) {
				t.Errorf("list during the restart: %v; want unavailable", err)
			}
			clk.SetTime(clk.Now().Add(10 * time.Second))
			snap := h.Snapshot()
			var locals, remotes int
			for _, e := range snap.Endpoints {
				if e.IsRemote() {
					remotes++
				} else {
					locals++
				}
			}
			if got := len(snap.LoadBalancers); got != tc.lbs || locals != tc.local || remotes != tc.remote {
				t.Errorf("left %d load balancers, %d local and %d remote endpoints; want %d, %d, %d", got, locals, remotes, tc.lbs, tc.local, tc.remote)
			}
			if len(snap.Networks) != 1 || len(snap.Namespaces) != 1 {
				t.Fatalf("networks %d, namespaces %d; want both kept", len(snap.Networks), len(snap.Namespaces))
			}
			if got := len(endpointIDsOf(t, &snap.Namespaces[0])); got != tc.ns {
				t.Errorf("namespace attachments %d; want %d", got, tc.ns)
			}
			// What was dropped can be made again, on the same frontend and IPs.
			if tc.remote == 0 {
				remote = mustEndpoint(t, h, n.ID, remoteDoc("10.244.2.7", "192.168.1.12"))
			}
			if tc.lbs == 0 {
				if _, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, remote.ID)); err != nil {
					t.Errorf("creating the lost load balancer again: %v", err)
				}
			}
		})
	}
	if err := New(Options{}).RestartLosing(time.Second, "everything"); err == nil {
		t.Error("an unknown loss was taken")
	}
}

func TestCommittedFaults(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	backend := sharedBackend(t, h)
	h.SetFaults(Faults{ErrorRate: map[Op]float64{OpCreateLoadBalancer: 1, OpListLoadBalancers: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeTimeout}, Committed: 1})
	lb, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, backend))
	wantCode(t, err, hnslb.CodeTimeout)
	if lb != nil {
		t.Errorf("failed call returned %+v", lb)
	}
	// The create happened: a retry meets the load balancer it made.
	if n := len(h.Snapshot().LoadBalancers); n != 1 {
		t.Fatalf("%d load balancers after a committed failure", n)
	}
	// Reads are never "committed"; an invalid write stays invalid.
	_, err = h.ListLoadBalancers(ctx)
	wantCode(t, err, hnslb.CodeTimeout)
	_, err = h.CreateLoadBalancer(ctx, lbDoc("10.96.0", 80, backend))
	wantCode(t, err, hnslb.CodeTimeout)
	if n := len(h.Snapshot().LoadBalancers); n != 1 {
		t.Errorf("%d load balancers after an invalid committed write", n)
	}
	h.SetFaults(Faults{})
	_, err = h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, backend))
	wantCode(t, err, hnslb.CodeAlreadyExists)
}

// TestKeptOnDelete: a delete HNS reports done keeps its object at rate 1
// (microsoft/Windows-Containers#631): still listed and still holding its
// frontend or address, so a new object there is refused as taken; with the
// fault lifted the next delete removes it.
func TestKeptOnDelete(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	nw := mustNetwork(t, h, "overlay", hnslb.NetworkTypeOverlay)
	remote := mustEndpoint(t, h, nw.ID, remoteDoc("10.244.3.5", "10.0.0.3"))
	lb, err := h.CreateLoadBalancer(ctx, withBackend(t, h, lbDoc("10.96.0.10", 80)))
	if err != nil {
		t.Fatal(err)
	}
	h.SetFaults(Faults{KeptOnDelete: 1})
	if err := h.DeleteLoadBalancer(ctx, lb.ID); err != nil {
		t.Fatalf("delete reported %v, want success", err)
	}
	if err := h.DeleteEndpoint(ctx, remote.ID); err != nil {
		t.Fatalf("delete reported %v, want success", err)
	}
	snap := h.Snapshot()
	if len(snap.LoadBalancers) != 1 || !slices.ContainsFunc(snap.Endpoints, func(e hnslb.Endpoint) bool { return e.ID == remote.ID }) {
		t.Errorf("after deletes kept: %d load balancers, endpoints %v; want both objects still there", len(snap.LoadBalancers), snap.Endpoints)
	}
	if n := h.Counters().KeptOnDelete; n != 2 {
		t.Errorf("KeptOnDelete counted %d, want 2", n)
	}
	_, err = h.CreateLoadBalancer(ctx, withBackend(t, h, lbDoc("10.96.0.10", 80)))
	wantCode(t, err, hnslb.CodeAlreadyExists)
	_, err = h.CreateEndpoint(ctx, nw.ID, remoteDoc("10.244.3.5", "10.0.0.4"))
	if err == nil {
		t.Error("a remote endpoint on the kept one's address was created")
	}

	h.SetFaults(Faults{})
	if err := h.DeleteLoadBalancer(ctx, lb.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.DeleteEndpoint(ctx, remote.ID); err != nil {
		t.Fatal(err)
	}
	if snap := h.Snapshot(); len(snap.LoadBalancers) != 0 || slices.ContainsFunc(snap.Endpoints, func(e hnslb.Endpoint) bool { return e.ID == remote.ID }) {
		t.Errorf("after the fault lifted: %d load balancers, endpoints %v; want both gone", len(snap.LoadBalancers), snap.Endpoints)
	}
}

// TestKeptDeletes: Faults.KeptDeletes keeps the next N deletes reported
// done, whatever object they delete, counted as kept, and the delete after
// them applies: an endpoint a third delete removes.
func TestKeptDeletes(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	nw := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	ep := mustEndpoint(t, h, nw.ID, endpointDoc("10.244.1.5"))
	h.SetFaults(Faults{KeptDeletes: 2})
	for i := range 3 {
		if err := h.DeleteEndpoint(ctx, ep.ID); err != nil {
			t.Fatalf("delete %d reported %v, want success", i+1, err)
		}
		_, err := h.GetEndpointByID(ctx, ep.ID)
		if kept := err == nil; kept != (i < 2) {
			t.Errorf("after delete %d: endpoint listed %v (%v), want %v", i+1, kept, err, i < 2)
		}
	}
	if n := h.Counters().KeptOnDelete; n != 2 {
		t.Errorf("KeptOnDelete counted %d, want 2", n)
	}
}

// TestPerOpCodes: a call of an operation Faults.Codes names fails with one
// of its codes; an applied write with one of AppliedCodes, and a write
// without AppliedCodes is never applied, whatever Committed says.
func TestPerOpCodes(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	backend := sharedBackend(t, h)
	h.SetFaults(Faults{
		ErrorRate: map[Op]float64{AnyOp: 1},
		Errors:    []hnslb.ErrorCode{hnslb.CodeTimeout},
		Codes: map[Op][]hnslb.ErrorCode{
			OpCreateLoadBalancer: {hnslb.CodeInvalidParameter}, OpListLoadBalancers: {0x80004005},
			OpDeleteLoadBalancer: {hnslb.CodeInvalidParameter},
		},
		AppliedCodes: map[Op][]hnslb.ErrorCode{OpCreateLoadBalancer: {hnslb.CodeManagerStopped}},
		Committed:    1,
	})
	_, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, backend))
	wantCode(t, err, hnslb.CodeManagerStopped)
	_, err = h.ListLoadBalancers(ctx)
	wantCode(t, err, 0x80004005)
	_, err = h.GetLoadBalancerByID(ctx, "00000000-0000-0000-0000-000000000001")
	wantCode(t, err, hnslb.CodeTimeout) // not named: Errors
	lbs := h.Snapshot().LoadBalancers
	if len(lbs) != 1 {
		t.Fatalf("%d load balancers after a create failed applied, want 1", len(lbs))
	}
	err = h.DeleteLoadBalancer(ctx, lbs[0].ID)
	wantCode(t, err, hnslb.CodeInvalidParameter)
	if n := len(h.Snapshot().LoadBalancers); n != 1 {
		t.Errorf("a delete without AppliedCodes was applied: %d load balancers left", n)
	}
}
