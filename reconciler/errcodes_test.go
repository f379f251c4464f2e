package reconciler

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// TestMissingObjectCodeVariants: whichever code HNS answers for a missing
// backend (0x803b0002, 0x490, 0x803b0007) or a missing load balancer (0x490,
// 0x803b0002), on every profile and modify mode, a load balancer write
// that meets a gone backend or a vanished load balancer serves the
// frontend again within one retry, and no load balancer of ours is ever
// deleted as the "blocker" of its own recreate.
func TestMissingObjectCodeVariants(t *testing.T) {
	scenarios := []struct {
		name string
		// break changes HNS behind the reconciler's back before the update.
		breakHNS func(e *env, lbID string)
	}{
		{"backend gone", func(e *env, _ string) {
			// The pod is deleted and started again with the same IP: the
			// reconciler's index still names its old endpoint.
			if err := e.hns.DeleteEndpoint(ctx, e.locals["10.244.1.10"]); err != nil {
				e.t.Fatal(err)
			}
			e.local("10.244.1.10")
		}},
		{"load balancer gone", func(e *env, lbID string) {
			if err := e.hns.DeleteLoadBalancerOutOfBand(lbID); err != nil {
				e.t.Fatal(err)
			}
		}},
	}
	for _, p := range sim.Profiles() {
		for _, backendCode := range sim.MissingBackendCodes() {
			for _, lbCode := range sim.MissingLoadBalancerCodes() {
				for _, mode := range []ModifyMode{ModifyAuto, ModifyEnabled} {
					for _, sc := range scenarios {
						name := fmt.Sprintf("%s/backend-0x%x/lb-0x%x/modify-%s/%s", p.Name, uint32(backendCode), uint32(lbCode), mode, sc.name)
						t.Run(name, func(t *testing.T) {
							testMissingObject(t, p.Name, sim.ErrorVariants{MissingBackend: backendCode, MissingLoadBalancer: lbCode}, mode, sc.breakHNS, sc.name == "load balancer gone")
						})
					}
				}
			}
		}
	}
}

func testMissingObject(t *testing.T, profile string, variants sim.ErrorVariants, mode ModifyMode, breakHNS func(*env, string), lbGone bool) {
	e := newEnvVariants(t, profile, variants)
	e.tweak = func(o *Options) { o.Modify = mode }
	e.local("10.244.1.10")
	e.local("10.244.1.11")
	want := lb("10.96.0.1", 80, loc("10.244.1.10"), loc("10.244.1.11"))
	r := e.started(want)
	old := e.hnsLB(want.Key)
	if old == nil {
		t.Fatal("no load balancer after the first Sync")
	}
	breakHNS(e, old.ID)
	rec := &recorder{Client: e.hns}
	met := &codesMet{Client: rec}
	r.client = newDeadlines(met, r.opts, r.log) // see every delete, and the codes met
	e.hns.ResetCounters()

	want.InternalPort = 8081 // an update: the write meets what broke
	upsert(r, want)
	r.Sync(ctx)
	if next, ok := r.NextRetry(); ok {
		e.clock.Step(next.Sub(e.clock.Now()))
		r.Sync(ctx)
	}
	if next, ok := r.NextRetry(); ok {
		t.Errorf("still retrying after one retry (next at %v): %+v", next, r.Statuses())
	}
	e.assertRealized([]intent.LB{want})
	wantCode := variants.MissingBackend
	if lbGone {
		wantCode = variants.MissingLoadBalancer
	}
	if !met.met(wantCode) {
		t.Errorf("no load balancer call met 0x%x, the code this run is for (met %#x)", uint32(wantCode), met.codes)
	}

	c := e.counters()
	for _, result := range []string{"PortAlreadyExists", "AlreadyExists"} {
		if n := c.CountResult(sim.OpCreateLoadBalancer, result); n != 0 {
			t.Errorf("%d creates met a load balancer on the frontend (%s): one of ours was taken for a blocker", n, result)
		}
	}
	var lbDeletes []string
	for _, op := range rec.ops {
		if id, ok := strings.CutPrefix(op, "delete-lb "); ok {
			lbDeletes = append(lbDeletes, id)
		}
	}
	// At most the replace of the old load balancer, where HNS cannot modify.
	if len(lbDeletes) > 1 || len(lbDeletes) == 1 && !strings.EqualFold(lbDeletes[0], old.ID) {
		t.Errorf("load balancers deleted %v; want at most the replaced %s", lbDeletes, old.ID)
	}
	// A modify that met the load balancer gone counts a drift repair; a
	// gone backend, or a replace whose delete found nothing, does not.
	wantDrift := 0
	modifies := e.profile.ModifyQuirk || e.profile.Features().ModifyLoadBalancer
	if lbGone && modifies && c.Count(sim.OpUpdateLoadBalancer) > 0 {
		wantDrift = 1
	}
	if got := e.drifted[KindLoadBalancer]; got != wantDrift {
		t.Errorf("drift repairs counted %d, want %d", got, wantDrift)
	}
	e.assertServed(want)
}

// assertServed traces a packet from a local pod to d's frontend through
// the packet model over HNS's state: it must reach one of d's backends.
func (e *env) assertServed(d intent.LB) {
	e.t.Helper()
	vc, err := vfp.NewCluster(vfp.Node{Name: "win-1", IPs: []netip.Addr{netip.MustParseAddr("10.0.0.1")}, HNS: e.snapshot()})
	if err != nil {
		e.t.Fatal(err)
	}
	pkt := vfp.Packet{
		Src:      netip.MustParseAddrPort("10.244.1.11:40000"),
		Dst:      netip.AddrPortFrom(netip.MustParseAddr(d.Key.VIP), d.Key.Port),
		Protocol: hnslb.ProtocolTCP,
	}
	v, err := vc.Trace(pkt, vfp.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	if v.Outcome != vfp.DeliveredToPod || !slices.Contains(ipsOf(d.Backends), v.Backend.Addr().String()) || v.Backend.Port() != d.InternalPort {
		e.t.Errorf("trace %s: %+v, want it delivered to one of %v on port %d", pkt, v, ipsOf(d.Backends), d.InternalPort)
	}
}

// modifyEnv is a started node whose reconciler logs into a buffer and
// counts ModifyTurnedOff calls.
type modifyEnv struct {
	*env
	r       *Reconciler
	want    intent.LB
	logs    ktesting.Underlier
	turnOff int
}

func newModifyEnv(t *testing.T, profile string, tweak func(*Options)) *modifyEnv {
	m := &modifyEnv{env: newEnv(t, profile)}
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	m.logs = logger.GetSink().(ktesting.Underlier)
	m.tweak = func(o *Options) {
		o.Logger = logger
		o.ModifyTurnedOff = func() { m.turnOff++ }
		tweak(o)
	}
	m.local("10.244.1.10")
	m.local("10.244.1.11")
	m.local("10.244.1.12")
	m.want = lb("10.96.0.1", 80, loc("10.244.1.10"), loc("10.244.1.11"))
	m.r = m.started(m.want)
	return m
}

// update adds a backend (or, the second time, another) and syncs.
func (m *modifyEnv) update(backends ...intent.Backend) SyncResult {
	m.t.Helper()
	m.want.Backends = append(m.want.Backends, backends...)
	upsert(m.r, m.want)
	m.hns.ResetCounters()
	res := m.r.Sync(ctx)
	m.assertRealized([]intent.LB{m.want})
	return res
}

func (m *modifyEnv) logged(s string) int {
	return strings.Count(m.logs.GetBuffer().String(), s)
}

// TestModifyNotImplementedTurnsModifyOffOnce: features promised modify,
// HNS answers E_NOTIMPL: that update is a delete + create, and every later
// one too, without trying modify again; said once in the log and once to
// ModifyTurnedOff (the feature metric).
func TestModifyNotImplementedTurnsModifyOffOnce(t *testing.T) {
	m := newModifyEnv(t, sim.ProfileWS2022, func(o *Options) { o.Features.ModifyLoadBalancer = true })
	if res := m.update(loc("10.244.1.12")); res.Updated != 1 || res.Failed != 0 {
		t.Errorf("first update: %+v", res)
	}
	if c := m.counters(); c.CountResult(sim.OpUpdateLoadBalancer, "NotImplemented") != 1 || c.Writes() != 2 {
		t.Errorf("first update: want one refused modify, a delete and a create: %v", c.Calls)
	}
	m.want.Backends = m.want.Backends[:2]
	if res := m.update(); res.Updated != 1 {
		t.Errorf("second update: %+v", res)
	}
	if c := m.counters(); c.Count(sim.OpUpdateLoadBalancer) != 0 || c.Writes() != 2 {
		t.Errorf("second update: want a delete and a create, no modify: %v", c.Calls)
	}
	if m.turnOff != 1 || m.logged("Turning HNS load balancer modify off") != 1 {
		t.Errorf("ModifyTurnedOff called %d times, logged %d times; want once each", m.turnOff, m.logged("Turning HNS load balancer modify off"))
	}
}

// TestModifyModeOverride: --hns-modify-load-balancer forces modify off on
// an HNS that has it, and on on one that lacks it, where every update
// tries it and falls back to delete + create, never turning it off.
func TestModifyModeOverride(t *testing.T) {
	t.Run("disabled", func(t *testing.T) {
		m := newModifyEnv(t, sim.ProfileWS2025, func(o *Options) { o.Modify = ModifyDisabled })
		m.update(loc("10.244.1.12"))
		if c := m.counters(); c.Count(sim.OpUpdateLoadBalancer) != 0 || c.Count(sim.OpDeleteLoadBalancer) != 1 || c.Count(sim.OpCreateLoadBalancer) != 1 {
			t.Errorf("want delete + create, no modify: %v", c.Calls)
		}
	})
	t.Run("enabled", func(t *testing.T) {
		m := newModifyEnv(t, sim.ProfileWS2022, func(o *Options) { o.Modify = ModifyEnabled })
		m.update(loc("10.244.1.12"))
		first := m.counters()
		m.want.Backends = m.want.Backends[:2]
		m.update()
		for i, c := range []sim.Counters{first, m.counters()} {
			if c.CountResult(sim.OpUpdateLoadBalancer, "NotImplemented") != 1 || c.Writes() != 2 {
				t.Errorf("update %d: want a refused modify, a delete and a create: %v", i+1, c.Calls)
			}
		}
		if m.turnOff != 0 || m.logged("keeps trying it") != 1 {
			t.Errorf("ModifyTurnedOff called %d times (want 0), fall-back logged %d times (want 1)", m.turnOff, m.logged("keeps trying it"))
		}
	})
	t.Run("enabled on ws2025", func(t *testing.T) {
		m := newModifyEnv(t, sim.ProfileWS2025, func(o *Options) { o.Modify = ModifyEnabled })
		before := m.hnsLB(m.want.Key).ID
		m.update(loc("10.244.1.12"))
		if c := m.counters(); c.Writes() != 1 || c.Count(sim.OpGetLoadBalancer) != 0 || m.hnsLB(m.want.Key).ID != before {
			t.Errorf("want one modify in place, no read-back: %v", c.Calls)
		}
	})
}

// TestModifyReadBackOn154: HNS 15.4 reports a modify done but keeps the
// old backends (kubernetes/kubernetes#131466). Forced on there, every
// modify is read back and replaced when the backends did not change; in
// auto mode (features wrongly promising modify) the first one turns it off.
func TestModifyReadBackOn154(t *testing.T) {
	t.Run("enabled", func(t *testing.T) {
		m := newModifyEnv(t, sim.ProfileWS2025Mod4, func(o *Options) { o.Modify = ModifyEnabled })
		for range 2 {
			m.update(loc("10.244.1.12"))
			if c := m.counters(); c.Count(sim.OpUpdateLoadBalancer) != 1 || c.Count(sim.OpGetLoadBalancer) != 1 || c.Writes() != 3 {
				t.Errorf("want modify, read-back, delete, create: %v", c.Calls)
			}
			m.want.Backends = m.want.Backends[:2]
			m.update()
		}
		if m.turnOff != 0 {
			t.Errorf("ModifyTurnedOff called %d times under enabled", m.turnOff)
		}
	})
	t.Run("auto", func(t *testing.T) {
		m := newModifyEnv(t, sim.ProfileWS2025Mod4, func(o *Options) { o.Features.ModifyLoadBalancer = true })
		m.update(loc("10.244.1.12"))
		m.want.Backends = m.want.Backends[:2]
		m.update()
		if c := m.counters(); c.Count(sim.OpUpdateLoadBalancer) != 0 || m.turnOff != 1 {
			t.Errorf("second update: want no modify after the read-back showed it ignored (turned off %d times): %v", m.turnOff, c.Calls)
		}
	})
}

func TestModifyModeOn(t *testing.T) {
	with, without := hnslb.Features{ModifyLoadBalancer: true}, hnslb.Features{}
	for _, c := range []struct {
		mode          ModifyMode
		with, without bool
	}{{"", true, false}, {ModifyAuto, true, false}, {ModifyEnabled, true, true}, {ModifyDisabled, false, false}} {
		if c.mode.On(with) != c.with || c.mode.On(without) != c.without {
			t.Errorf("%q: On(with modify) = %v, On(without) = %v", c.mode, c.mode.On(with), c.mode.On(without))
		}
	}
}

// TestRefusedDocumentAsksNoListing: HNS refuses a load balancer's and a
// remote endpoint's create with each code it has for a document it will not
// take. HNS made nothing, so no retry asks a listing to look for what a
// lost create made (at 10,000 Services one is seconds of hcn calls); each
// retry fails with HNS's code, and once HNS takes the documents they are
// made.
func TestRefusedDocumentAsksNoListing(t *testing.T) {
	for _, code := range hnslb.InvalidDocumentCodes() {
		t.Run(fmt.Sprintf("0x%x", uint32(code)), func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			e.local("10.244.1.10")
			r := e.started()
			e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1, sim.OpCreateEndpoint: 1},
				Errors: []hnslb.ErrorCode{code}})
			d := lb("10.96.0.30", 443, loc("10.244.1.10"), rem("10.244.3.31", "192.168.0.3"))
			upsert(r, d)
			before := e.fullListings()
			for range 6 {
				res := r.Sync(ctx)
				if res.ListingWanted || res.Failed == 0 {
					t.Fatalf("a refused create: %+v, want a failure and no listing asked", res)
				}
				if st := statusOf(r, d.Key); !strings.Contains(st.LastError, fmt.Sprintf("0x%x", uint32(code))) {
					t.Fatalf("status %+v does not carry HNS's code", st)
				}
				e.clock.Step(DefaultRetryMax)
			}
			if n := e.fullListings() - before; n != 0 {
				t.Errorf("%d listings over the retries", n)
			}
			e.hns.SetFaults(sim.Faults{})
			e.converge(r)
			e.assertRealized([]intent.LB{d})
		})
	}
}

// TestRemoteBackendGoneIsMadeAgainAtTheRetry: a remote endpoint of ours is
// deleted behind hnsproxy's back (hnsdiag, another agent), and an update
// of the load balancer that uses it meets it missing, whichever code HNS
// answers, whether HNS modifies or replaces. A Get of the endpoint tells
// it is gone: it is made again and the load balancer written with it at
// its first retry, without waiting for a drift repair, and counted as
// drift. Before, every retry failed the same way until the next repair.
func TestRemoteBackendGoneIsMadeAgainAtTheRetry(t *testing.T) {
	for _, p := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, code := range sim.MissingBackendCodes() {
			for _, mode := range []ModifyMode{ModifyAuto, ModifyEnabled} {
				t.Run(fmt.Sprintf("%s/0x%x/modify-%s", p, uint32(code), mode), func(t *testing.T) {
					e := newEnvVariants(t, p, sim.ErrorVariants{MissingBackend: code})
					e.tweak = func(o *Options) { o.Modify = mode }
					e.local("10.244.1.10")
					want := lb("10.96.0.1", 80, loc("10.244.1.10"), rem("10.244.3.31", "192.168.0.3"))
					beside := lb("10.96.0.2", 80, rem("10.244.3.31", "192.168.0.3"))
					r := e.started(want, beside)
					gone := e.remoteID("10.244.3.31")
					if err := e.hns.DeleteEndpoint(ctx, gone); err != nil {
						t.Fatal(err)
					}
					want.InternalPort, beside.InternalPort = 8081, 8081 // updates: each write meets the endpoint gone
					upsert(r, want)
					upsert(r, beside)
					listed, asked := e.fullListings(), e.counters().Count(sim.OpGetEndpoint)
					r.Sync(ctx)
					if n := e.counters().Count(sim.OpGetEndpoint) - asked; n != silentListings {
						t.Errorf("the endpoint both writes met missing was asked for %d times, want %d (one read, its looks)", n, silentListings)
					}
					// The endpoint is made at once, the load balancer at its retry.
					for range 2 {
						if next, ok := r.NextRetry(); ok {
							e.clock.Step(max(0, next.Sub(e.clock.Now())))
							r.Sync(ctx)
						}
					}
					if next, ok := r.NextRetry(); ok {
						t.Errorf("still retrying after the load balancer's first retry (next at %v): %+v", next, r.Statuses())
					}
					e.assertRealized([]intent.LB{want, beside})
					if now := e.remoteID("10.244.3.31"); now == gone {
						t.Errorf("the remote endpoint was not made again")
					}
					if e.fullListings() != listed || e.drifted[KindRemoteEndpoint] != 1 {
						t.Errorf("%d listings, remote endpoint drift counted %d; want none and 1", e.fullListings()-listed, e.drifted[KindRemoteEndpoint])
					}
					e.assertStateFileMatchesHNS()
				})
			}
		}
	}
}

// TestMissingBackendAsksEachRemoteEndpointOnce: two pods' endpoints on
// this node are replaced (same IPs, new endpoints), and the two load
// balancers they back, which share a remote backend, are updated in one
// Sync; each write meets its local endpoint missing. The remote endpoint,
// which HNS still has, is asked for once in that Sync, not once per write
// (a pod backs about nine Services at 10,000), and is not made again.
func TestMissingBackendAsksEachRemoteEndpointOnce(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	e.local("10.244.1.10")
	e.local("10.244.1.11")
	a := lb("10.96.0.1", 80, loc("10.244.1.10"), rem("10.244.3.31", "192.168.0.3"))
	b := lb("10.96.0.2", 80, loc("10.244.1.11"), rem("10.244.3.31", "192.168.0.3"))
	r := e.started(a, b)
	remote := e.remoteID("10.244.3.31")
	for _, ip := range []string{"10.244.1.10", "10.244.1.11"} {
		if err := e.hns.DeleteEndpoint(ctx, e.locals[ip]); err != nil {
			t.Fatal(err)
		}
		e.local(ip) // the pod again, with a new endpoint
	}
	a.InternalPort, b.InternalPort = 8081, 8081
	upsert(r, a)
	upsert(r, b)
	asked := e.counters().Count(sim.OpGetEndpoint)
	if res := r.Sync(ctx); res.Failed != 2 {
		t.Fatalf("sync %+v: want both writes to meet their local endpoint missing", res)
	}
	if n := e.counters().Count(sim.OpGetEndpoint) - asked; n != 1 {
		t.Errorf("the shared remote endpoint was asked for %d times, want once", n)
	}
	e.converge(r)
	e.assertRealized([]intent.LB{a, b})
	if e.remoteID("10.244.3.31") != remote || e.drifted[KindRemoteEndpoint] != 0 {
		t.Errorf("the remote endpoint HNS still had was made again (drift counted %d)", e.drifted[KindRemoteEndpoint])
	}
}
