package reconciler

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

func TestEndpointWaitsForLoadBalancersStillUsingIt(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	want := e.threeServices()
	r := e.started(want...)
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpUpdateLoadBalancer: 1}})
	// 10.244.3.31 loses its only user, but the modify of that user fails.
	want[2] = lb("10.96.0.30", 443, rem("10.244.3.32", "192.168.0.3"))
	upsert(r, want[2])
	res := r.Sync(ctx)
	if res.Failed != 1 || e.counters().Count(sim.OpDeleteEndpoint) != 0 {
		t.Fatalf("sync with failing modify: %+v %v", res, e.counters().Calls)
	}
	var waiting *EndpointStatus
	for _, s := range r.EndpointStatuses() {
		if s.Endpoint.IP == "10.244.3.31" {
			waiting = &s
		}
	}
	if waiting == nil || waiting.Desired || waiting.RealizedUsers != 1 || waiting.State != StatePending || !strings.Contains(waiting.LastError, "still use it") {
		t.Fatalf("endpoint status %+v", waiting)
	}
	e.hns.SetFaults(sim.Faults{})
	e.converge(r)
	e.assertRealized(want)
}

func TestCancelledContextFailsEverythingAndKeepsState(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want...)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, d := range want {
		remove(r, d.Key)
	}
	res := r.Sync(cancelled)
	if res.Failed != 3 || res.Deleted != 0 || len(e.snapshot().LoadBalancers) != 3 {
		t.Fatalf("cancelled sync %+v", res)
	}
	e.converge(r)
	e.assertRealized(nil)
	if n := len(r.Statuses()); n != 0 {
		t.Errorf("%d statuses left after deleting everything", n)
	}
}

func TestIPv6AndNodePortLoadBalancers(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	e.local("10.244.1.10")
	v6, err := e.hns.CreateEndpoint(ctx, e.netID, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: "fd00:10:244:1::10"}}})
	if err != nil {
		t.Fatal(err)
	}
	nodePort := lb("", 30080, loc("10.244.1.10"))
	nodePort.PortFlags = hnslb.PortMappingFlagsLocalRoutedVIP | hnslb.PortMappingFlagsVipExternalIP
	cluster6 := lb("fd00:10:96::10", 80, loc("fd00:10:244:1::10"))
	cluster6.Key.Family, cluster6.SourceVIP = intent.IPv6, ""
	nodePort6 := cluster6
	nodePort6.Key.VIP, nodePort6.Key.Port, nodePort6.Key.Protocol = "", 30080, hnslb.ProtocolUDP
	r := e.started(nodePort, cluster6, nodePort6)
	for _, d := range []intent.LB{nodePort, cluster6, nodePort6} {
		got := e.hnsLB(d.Key)
		if got == nil {
			t.Fatalf("%s not realized", d.Key)
		}
		if (got.Flags&hnslb.LoadBalancerFlagsIPv6 != 0) != (d.Key.Family == intent.IPv6) {
			t.Errorf("%s flags %v", d.Key, got.Flags)
		}
	}
	if got := e.hnsLB(cluster6.Key).HostComputeEndpoints; len(got) != 1 || got[0] != v6.ID {
		t.Errorf("v6 backends %v", got)
	}
	if s := nodePort.Key.String(); s != "nodeport/v4:30080/tcp" {
		t.Errorf("key string %q", s)
	}
	if s := nodePort6.Key.String(); s != "nodeport/v6:30080/udp" {
		t.Errorf("key string %q", s)
	}
	// A restart adopts all three.
	_, res := e.start(e.hns, nodePort, cluster6, nodePort6)
	if e.counters().Writes() != 0 || res.Pending != 0 {
		t.Errorf("restart: %v %+v", e.counters().Calls, res)
	}
	_ = r
}

func TestStaleDeletionRetriedAndVanishedStaleForgotten(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	e.started(want...)
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteLoadBalancer: 1, sim.OpDeleteEndpoint: 1}})
	// Nothing is desired after the restart: every object of ours is stale.
	r, res := e.start(e.hns)
	if res.Failed != 3 || res.Pending != 6 || len(res.Errors) != 3 || res.Errors[0].Kind != KindStale {
		t.Fatalf("stale deletes failing: %+v", res)
	}
	if next, ok := r.NextRetry(); !ok || !next.After(e.clock.Now()) {
		t.Errorf("next retry %v %v", next, ok)
	}
	// Until then a Sync leaves them alone: a delete HNS refused is not
	// sent again at every Sync, but at its backoff.
	e.hns.ResetCounters()
	r.Sync(ctx)
	if c := e.counters(); c.Count(sim.OpDeleteLoadBalancer)+c.Count(sim.OpDeleteEndpoint) != 0 {
		t.Errorf("a Sync before the stale objects' retry deleted again: %v", c.Calls)
	}
	// Someone else deletes one of them. A Repair whose listing leaves it
	// out keeps it (a listing may leave out one HNS holds: unlisted.go);
	// its delete's "not found" forgets it.
	gone := e.hnsLB(want[0].Key)
	if err := e.hns.DeleteLoadBalancerOutOfBand(gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if _, still := r.staleLBs[gone.ID]; !still {
		t.Error("stale load balancer forgotten on a listing's word")
	}
	e.hns.SetFaults(sim.Faults{})
	e.converge(r)
	if _, still := r.staleLBs[gone.ID]; still {
		t.Error("vanished stale load balancer not forgotten")
	}
	// Its failed deletes' backoff too: the rate limiter's count of them
	// would otherwise stay for the life of the process, one per vanished ID.
	if n := r.limiter.NumRequeues(objectRef{id: gone.ID}); n != 0 {
		t.Errorf("vanished stale load balancer's backoff kept: %d failures counted", n)
	}
	e.assertRealized(nil)
	if s := readState(t, e.stateFile); len(s.LoadBalancers)+len(s.RemoteEndpoints) != 0 {
		t.Errorf("state after cleanup %+v", s)
	}
}

func TestRepairDeletesLeakedOwnedObject(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	want := e.threeServices()
	r := e.started(want...)
	lbID, epID := e.foreign()
	// White box: pretend we had created them and lost track (a bug, a lost reply).
	r.ownedLBs[lbID], r.ownedEPs[epID] = struct{}{}, struct{}{}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	res := r.Sync(ctx)
	if res.Deleted != 2 {
		t.Errorf("leak cleanup %+v", res)
	}
	e.assertRealized(want)
}

func TestStateFileProblems(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"wrong-version.json": `{"version":99,"loadBalancers":["x"]}`,
		"truncated.json":     `{"version":1,"loadBa`,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadState(p); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	if _, err := loadState(dir); err == nil {
		t.Error("a directory loaded as state file")
	}
	if s, err := loadState(filepath.Join(dir, "missing.json")); err != nil || len(s.LoadBalancers) != 0 {
		t.Errorf("missing file: %v %+v", err, s)
	}

	// An unwritable state path: nothing is created (it could not be
	// recorded, so a crash would leak it); the write is retried, and once it
	// works everything is created.
	e := newEnv(t, sim.ProfileWS2022)
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e.stateFile = filepath.Join(blocker, "state.json")
	want := e.threeServices()
	r, res := e.start(e.hns, want...)
	if n := len(e.snapshot().LoadBalancers); n != 0 || res.Created != 0 || res.Pending == 0 {
		t.Errorf("created %d load balancers (%+v) with an unwritable state file", n, res)
	}
	if len(r.unsaved) == 0 && !r.snapshotDue {
		t.Error("failed state write not remembered for a retry")
	}
	e.stateFile = filepath.Join(dir, "sub", "state.json")
	r.opts.StateFile = e.stateFile
	e.clock.Step(DefaultRetryMax)
	e.converge(r)
	e.assertRealized(want)
	if s := readState(t, e.stateFile); len(s.LoadBalancers) != 3 || len(r.unsaved) != 0 || r.snapshotDue {
		t.Errorf("state after retry %+v", s)
	}
}

func TestDefaultsAndStatusJSON(t *testing.T) {
	r := New(nil, Options{})
	if r.opts.RetryBase != DefaultRetryBase || r.opts.RetryMax != DefaultRetryMax || r.clock == nil {
		t.Errorf("defaults %+v", r.opts)
	}
	if err := r.Start(ctx); err == nil {
		t.Error("start without a client succeeded")
	}
	if err := New(sim.New(sim.Options{}), Options{}).Start(ctx); err == nil {
		t.Error("start without a network succeeded")
	}
	r = New(nil, Options{RetryBase: time.Hour})
	if r.opts.RetryMax != time.Hour {
		t.Errorf("RetryMax %v below RetryBase", r.opts.RetryMax)
	}

	e := newEnv(t, sim.ProfileWS2022)
	r = e.started(e.threeServices()...)
	raw, err := json.Marshal(r.Statuses())
	if err != nil {
		t.Fatal(err)
	}
	var back []map[string]any
	if err := json.Unmarshal(raw, &back); err != nil || len(back) != 3 {
		t.Fatalf("statuses JSON %s: %v", raw, err)
	}
	if back[0]["state"] != "done" || back[0]["realizedID"] == "" || back[0]["nextRetry"] != nil {
		t.Errorf("status JSON %v", back[0])
	}
}

func TestHelpers(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"10.0.0.2", "10.0.0.10", -1},
		{"x", "10.0.0.1", 1},
		{"10.0.0.1", "x", -1},
		{"a", "b", -1},
	} {
		if got := intent.CompareIPs(tc.a, tc.b); got != tc.want {
			t.Errorf("compareIPs(%s, %s) = %d", tc.a, tc.b, got)
		}
	}
	if _, ok := KeyOf(&hnslb.LoadBalancer{PortMappings: make([]hnslb.PortMapping, 2)}); ok {
		t.Error("two port mappings have a key")
	}
	if k, ok := KeyOf(&hnslb.LoadBalancer{FrontendVIPs: []string{"fd00::1"}, PortMappings: make([]hnslb.PortMapping, 1)}); !ok || k.Family != intent.IPv6 {
		t.Errorf("v6 VIP key %+v", k)
	}
	if sameLB(nil, &hnslb.LoadBalancer{}) || !sameLB(nil, nil) {
		t.Error("sameLB with nil")
	}
	if !sameIDSet([]string{"A", "b"}, []string{"B", "a"}) || sameIDSet([]string{"a"}, []string{"a", "b"}) {
		t.Error("sameIDSet")
	}
	if !remoteMatches(intent.RemoteEndpoint{IP: "1.1.1.1", MAC: "00:15:5D:00:00:01"}, intent.RemoteEndpoint{IP: "1.1.1.1", MAC: "00-15-5d-00-00-01"}) {
		t.Error("MAC spellings differ")
	}
	if err := (ObjectError{Kind: KindRemoteEndpoint, Name: "1.1.1.1", Err: context.Canceled}); !strings.Contains(err.Error(), "RemoteEndpoint 1.1.1.1") {
		t.Error(err)
	}
}

func TestModifyNotImplementedFallsBackToReplace(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	e.tweak = func(o *Options) { o.Features.ModifyLoadBalancer = true } // wrong: ws2022 has no modify
	r := e.started(want...)
	want[0] = lb("10.96.0.10", 53, loc("10.244.1.10"), loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.2"))
	upsert(r, want[0])
	res := r.Sync(ctx)
	c := e.counters()
	if res.Updated != 1 || res.Failed != 0 || c.CountResult(sim.OpUpdateLoadBalancer, "NotImplemented") != 1 || c.Writes() != 2 {
		t.Errorf("fallback: %+v %v", res, c.Calls)
	}
	e.assertRealized(want)
}

func TestDualStackPodEndpointBacksBothFamilies(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	// One pod endpoint with an intent.IPv4 and an intent.IPv6 address, written the long way.
	pod, err := e.hns.CreateEndpoint(ctx, e.netID, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{
		{IpAddress: "10.244.1.20"}, {IpAddress: "fd00:10:244:1:0:0:0:20"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cluster4 := lb("10.96.0.20", 80, loc("10.244.1.20"))
	cluster6 := lb("fd00:10:96::20", 80, loc("fd00:10:244:1::20"))
	cluster6.Key.Family, cluster6.SourceVIP = intent.IPv6, ""
	e.started(cluster4, cluster6)
	for _, d := range []intent.LB{cluster4, cluster6} {
		got := e.hnsLB(d.Key)
		if got == nil || len(got.HostComputeEndpoints) != 1 || got.HostComputeEndpoints[0] != pod.ID {
			t.Errorf("%s: load balancer %+v, want the dual-stack pod endpoint %s as its backend", d.Key, got, pod.ID)
		}
	}
}
