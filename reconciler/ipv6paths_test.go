package reconciler

import (
	"fmt"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// The reconciler's rarer paths on IPv6 and dual-stack nodes, each under
// every echo option and all at once: whatever form HNS answers an IPv6
// address in, and whatever else it leaves out, hnsproxy must neither
// leak its own object as another agent's, nor rewrite it at every repair,
// nor take another agent's (or one it deleted) as its own.

// familyCase is one family of a node under test: its pod, a pod on
// another node, a cluster IP, a tenant's external IP and the source VIP.
type familyCase struct {
	fam                          intent.IPFamily
	pod, remotePod, cluster, ext string
	sourceVIP                    string
}

var (
	v4Case = familyCase{intent.IPv4, "10.244.1.10", "10.244.2.20", "10.96.0.30", "203.0.113.5", "10.244.1.2"}
	v6Case = familyCase{intent.IPv6, "fd00:10:244:1::10", "fd00:10:244:2::20", "fd00:10:96::30", "2001:db8::5", "fd00:10:244:1::2"}
)

// stacks are the nodes run: IPv6 alone and dual-stack.
var stacks = map[string][]familyCase{"ipv6": {v6Case}, "dual-stack": {v4Case, v6Case}}

// onEveryEchoAndStack runs fn on a ws2025 l2bridge node (dual-stack HNS,
// modify) and a ws2022 one (dual-stack HNS, updates as delete and create)
// under each echo option and all at once, for IPv6 and dual-stack.
func onEveryEchoAndStack(t *testing.T, fn func(t *testing.T, e *env, fams []familyCase)) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		for name, echo := range echoProfiles(t) {
			for stack, fams := range stacks {
				t.Run(fmt.Sprintf("%s/%s/%s", profile, name, stack), func(t *testing.T) {
					e := newEnv(t, profile)
					e.hns.SetEcho(echo)
					for _, f := range fams {
						e.local(f.pod)
					}
					fn(t, e, fams)
				})
			}
		}
	}
}

// familyLB is lb on vip for f's family: its source VIP, its family.
func familyLB(f familyCase, vip string, port uint16, backends ...intent.Backend) intent.LB {
	d := lb(vip, port, backends...)
	d.Key.Family, d.SourceVIP = f.fam, f.sourceVIP
	return d
}

// tenantLB is an external IP's load balancer of f's family, with a local and
// a remote backend.
func tenantLB(f familyCase, internalPort uint16) intent.LB {
	d := familyLB(f, f.ext, 80, loc(f.pod), rem(f.remotePod, ""))
	d.Origin, d.PortFlags, d.InternalPort = intent.OriginExternalIP, hnslb.PortMappingFlagsVipExternalIP, internalPort
	return d
}

// quietAfter runs a drift-repair period, then a restart with want
// desired, and expects neither to write anything or to find a frontend
// held.
func (e *env) quietAfter(r *Reconciler, when string, want []intent.LB) {
	e.t.Helper()
	e.quietPeriod(r, when)
	_, res := e.start(e.hns, want...)
	if c := e.counters(); c.Writes() != 0 || res.Pending+res.Failed != 0 || len(res.ForeignHeld) != 0 {
		e.t.Errorf("%s, a restart: %+v, calls %v", when, res, c.Calls)
	}
}

// quietPeriod runs a drift-repair period and expects it to write nothing.
func (e *env) quietPeriod(r *Reconciler, when string) {
	e.t.Helper()
	e.hns.ResetCounters()
	e.clock.Step(5 * time.Minute)
	if err := r.Repair(ctx); err != nil {
		e.t.Fatal(err)
	}
	if res := r.Sync(ctx); res.Pending+res.Failed != 0 || len(res.ForeignHeld) != 0 {
		e.t.Errorf("%s, a repair period: %+v", when, res)
	}
	if c := e.counters(); c.Writes() != 0 {
		e.t.Errorf("%s, a repair period wrote %v", when, c.Calls)
	}
}

// TestKeptDeletesUnderEveryEcho: HNS reports the deletes of a tenant's
// load balancers and their remote endpoints done and keeps them
// (microsoft/Windows-Containers#631). The repair finds each kept one as
// hnsproxy's and deletes it again; before that, another Service wanting the
// same tenant frontend takes the kept one as hnsproxy's own, not as another
// agent's it must keep away from. A restart before the repair does the
// same from the state file's record of those deletes. Then a repair period
// writes nothing.
func TestKeptDeletesUnderEveryEcho(t *testing.T) {
	for _, c := range []struct{ takenBack, restart bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		takenBack := c.takenBack
		t.Run(fmt.Sprintf("frontend wanted again %v/restart %v", c.takenBack, c.restart), func(t *testing.T) {
			onEveryEchoAndStack(t, func(t *testing.T, e *env, fams []familyCase) {
				kept := map[ObjectKind]int{}
				e.tweak = func(o *Options) { o.DeleteKept = func(k ObjectKind) { kept[k]++ } }
				r := e.started()
				var first, second []intent.LB
				for _, f := range fams {
					first = append(first, tenantLB(f, 8080))
					second = append(second, tenantLB(f, 9090))
				}
				upsert(r, first...)
				e.converge(r)
				var old []string
				for _, d := range first {
					old = append(old, e.hnsLB(d.Key).ID)
				}
				for _, f := range fams {
					old = append(old, e.remoteID(f.remotePod))
				}
				keys := make([]intent.LBKey, len(first))
				for i, d := range first {
					keys[i] = d.Key
				}
				e.removeKept(r, keys...)
				for _, id := range old {
					if !e.hasObject(id) {
						t.Fatalf("the fault did not keep %s", id)
					}
				}
				want := []intent.LB{}
				if takenBack {
					want = second
				}
				if c.restart {
					r = e.reconciler()
					upsert(r, want...)
					if err := r.Start(ctx); err != nil {
						t.Fatal(err)
					}
					e.converge(r)
				}
				if takenBack {
					upsert(r, second...)
					e.converge(r)
					for _, d := range second {
						if st := statusOf(r, d.Key); st.State != StateDone {
							t.Errorf("%s: %+v, want it made over the kept one", d.Key, st)
						}
					}
				}
				e.clock.Step(5 * time.Minute)
				if err := r.Repair(ctx); err != nil {
					t.Fatal(err)
				}
				e.converge(r)
				for _, id := range old {
					if e.hasObject(id) && !takenBack {
						t.Errorf("kept object %s still in HNS after a repair", id)
					}
				}
				if !takenBack && !c.restart && (kept[KindLoadBalancer] != len(fams) || kept[KindRemoteEndpoint] != len(fams)) {
					t.Errorf("kept objects counted %v, want %d of each kind", kept, len(fams))
				}
				e.assertRealized(want)
				e.quietAfter(r, "after the kept objects went", want)
			})
		})
	}
}

// TestFrontendTakenFromAnotherAgentUnderEveryEcho: another agent's load
// balancer holds a cluster IP's frontend (a leftover: the apiserver gave
// that frontend to the Service) and a tenant's external IP. The cluster
// IP's is taken, the tenant's is left alone and reported until it goes,
// then taken; neither is left to a "foreign" holder that is hnsproxy's own,
// and a repair period and a restart after write nothing. The other agent
// writes its addresses in a text form of its own.
func TestFrontendTakenFromAnotherAgentUnderEveryEcho(t *testing.T) {
	onEveryEchoAndStack(t, func(t *testing.T, e *env, fams []familyCase) {
		r := e.started()
		var want []intent.LB
		var tenants []string
		for _, f := range fams {
			cluster := familyLB(f, f.cluster, 80, loc(f.pod))
			tenant := tenantLB(f, 8080)
			for _, d := range []intent.LB{cluster, tenant} {
				theirs := withInternalPort(d, 7070)
				doc := BuildLB(&theirs, []string{e.locals[f.pod]})
				doc.FrontendVIPs = []string{otherForm(d.Key.VIP)}
				doc.SourceVIP = otherForm(doc.SourceVIP)
				got, err := e.hns.CreateLoadBalancer(ctx, doc)
				if err != nil {
					t.Fatal(err)
				}
				if d.Origin == intent.OriginExternalIP {
					tenants = append(tenants, got.ID)
				}
			}
			want = append(want, cluster, tenant)
		}
		e.hns.ResetCounters()
		upsert(r, want...)
		e.syncListed(r)
		e.clock.Step(DefaultRetryMax)
		res := r.Sync(ctx)
		if len(res.ForeignHeld) != len(fams) {
			t.Fatalf("ForeignHeld %+v, want the %d tenant frontends", res.ForeignHeld, len(fams))
		}
		for _, id := range tenants {
			if !e.hasLB(id) {
				t.Fatalf("the tenant's frontend holder %s was deleted", id)
			}
			if err := e.hns.DeleteLoadBalancerOutOfBand(id); err != nil {
				t.Fatal(err)
			}
		}
		e.clock.Step(DefaultRetryMax)
		e.converge(r)
		if res := r.Sync(ctx); len(res.ForeignHeld) != 0 || res.Failed+res.Pending != 0 {
			t.Errorf("after the holders went: %+v", res)
		}
		e.assertRealized(want)
		e.quietAfter(r, "after the frontends were taken", want)
	})
}

// otherForm is how another agent may write an address of v6Case: in
// another valid text form than hnsproxy's canonical one.
func otherForm(s string) string {
	if o, ok := map[string]string{
		v6Case.cluster:   "FD00:10:96:0:0:0:0:30",
		v6Case.ext:       "2001:0db8:0000:0000:0000:0000:0000:0005",
		v6Case.sourceVIP: "fd00:10:244:1:0:0:0:2",
	}[s]; ok {
		return o
	}
	return s
}

// TestPartialCreatesUnderEveryEcho: a create HNS fails after making a load
// balancer without port mappings (kubernetes/kubernetes#141488), holding
// its frontend or not. hnsproxy deletes what it left, programs the
// Service, and a repair period and a restart after write nothing.
func TestPartialCreatesUnderEveryEcho(t *testing.T) {
	for _, holds := range []bool{false, true} {
		t.Run(fmt.Sprintf("holds its frontend %v", holds), func(t *testing.T) {
			onEveryEchoAndStack(t, func(t *testing.T, e *env, fams []familyCase) {
				r := e.started()
				var want []intent.LB
				for _, f := range fams {
					want = append(want, familyLB(f, f.cluster, 443, loc(f.pod), rem(f.remotePod, "")), tenantLB(f, 8080))
				}
				e.failCreatesLeavingPartials(hnslb.CodeInvalidParameter, holds)
				upsert(r, want...)
				if res := r.Sync(ctx); res.Failed+res.Pending == 0 {
					t.Fatalf("the creates did not fail: %+v", res)
				}
				e.hns.SetFaults(sim.Faults{})
				if n := e.hns.Counters().PartialCreates; n == 0 {
					t.Fatal("no partial load balancer left")
				}
				e.converge(r)
				e.clock.Step(5 * time.Minute)
				if err := r.Repair(ctx); err != nil {
					t.Fatal(err)
				}
				e.converge(r)
				if left := e.portless(); len(left) != 0 {
					t.Errorf("load balancers without port mappings left: %v", left)
				}
				e.assertRealized(want)
				e.quietAfter(r, "after the partial creates went", want)
			})
		})
	}
}

// TestDriftRepairUnderEveryEcho: load balancers and remote endpoints
// deleted or changed behind hnsproxy's back are repaired within one
// period, each rewritten once; the period after writes nothing.
func TestDriftRepairUnderEveryEcho(t *testing.T) {
	onEveryEchoAndStack(t, func(t *testing.T, e *env, fams []familyCase) {
		var want []intent.LB
		for _, f := range fams {
			want = append(want, familyLB(f, f.cluster, 80, loc(f.pod), rem(f.remotePod, "")), tenantLB(f, 8080))
			np := familyLB(f, "", 30080, loc(f.pod))
			np.Origin, np.PortFlags = intent.OriginNodePort, hnslb.PortMappingFlagsLocalRoutedVIP|hnslb.PortMappingFlagsVipExternalIP
			want = append(want, np)
		}
		r := e.started(want...)
		for i, f := range fams {
			base := 3 * i
			if err := e.hns.DeleteLoadBalancerOutOfBand(e.hnsLB(want[base].Key).ID); err != nil {
				t.Fatal(err)
			}
			changed := e.hnsLB(want[base+1].Key)
			changed.PortMappings[0].InternalPort = 9999
			if _, err := e.hns.PutLoadBalancerOutOfBand(*changed); err != nil {
				t.Fatal(err)
			}
			if err := e.hns.DeleteEndpoint(ctx, e.remoteID(f.remotePod)); err != nil {
				t.Fatal(err)
			}
		}
		e.hns.ResetCounters()
		e.clock.Step(5 * time.Minute)
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		e.converge(r)
		e.assertRealized(want)
		for _, d := range want {
			if got := e.hnsLB(d.Key); got != nil && got.PortMappings[0].InternalPort != d.InternalPort {
				t.Errorf("%s internal port %d after the repair, want %d", d.Key, got.PortMappings[0].InternalPort, d.InternalPort)
			}
		}
		// Each family: the deleted and the changed load balancer, the one
		// whose remote endpoint went, and that endpoint.
		if c := e.counters(); c.Count(sim.OpCreateEndpoint) != len(fams) {
			t.Errorf("the repair created %d endpoints, want %d: %v", c.Count(sim.OpCreateEndpoint), len(fams), c.Calls)
		}
		e.quietAfter(r, "after the repair", want)
	})
}

// TestNetworkReplacedUnderEveryEcho: the network is made again under its
// name with a new ID, taking hnsproxy's remote endpoints with it; the load
// balancers HNS keeps name endpoints that are gone. The restarted
// hnsproxy programs everything on the new network, leaves no load
// balancer of the old as another agent's, and then writes nothing.
func TestNetworkReplacedUnderEveryEcho(t *testing.T) {
	onEveryEchoAndStack(t, func(t *testing.T, e *env, fams []familyCase) {
		e.named()
		var want []intent.LB
		for _, f := range fams {
			want = append(want, familyLB(f, f.cluster, 80, loc(f.pod), rem(f.remotePod, "")), tenantLB(f, 8080))
		}
		r := e.started(want...)
		was := e.netID
		now := e.replaceNetwork(true)
		wantChanged(t, r.Repair(ctx), was, now)
		e.netID = now
		for _, f := range fams {
			e.podOn(now, f.pod)
		}
		r2, res := e.start(e.hns, want...)
		e.converge(r2)
		if len(res.ForeignHeld) != 0 {
			t.Errorf("restart on the new network: %+v", res)
		}
		if res := r2.Sync(ctx); len(res.ForeignHeld) != 0 || res.Failed+res.Pending != 0 {
			t.Errorf("sync on the new network: %+v", res)
		}
		e.assertRealized(want)
		e.quietAfter(r2, "on the new network", want)
	})
}
