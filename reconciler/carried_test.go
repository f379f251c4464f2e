package reconciler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// Found by the fault soak: a create abandoned at its deadline, hnsproxy
// killed, and the create landing in HNS only after the restart listed it.
// The restarted reconciler carries the declaration that found nothing, so
// the drift repair claims what lands and deletes it once its Service is
// gone; a second restart inside the window carries it again; a repair after
// the window drops it, and a load balancer made on that frontend later is
// left alone.
func TestLateCreateAfterARestartIsClaimed(t *testing.T) {
	for _, tc := range []struct {
		name string
		hang sim.Op
		want intent.LB
	}{
		{"load balancer", sim.OpCreateLoadBalancer, lb("10.96.0.10", 80, loc("10.244.1.10"))},
		{"remote endpoint", sim.OpCreateEndpoint, lb("10.96.0.10", 80, rem("10.244.2.20", "192.168.0.2"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			w := e.withHangWatch(0)
			e.local("10.244.1.10")
			killed := w.watch(e.started())
			e.hns.SetFaults(sim.Faults{Hang: []sim.Op{tc.hang}})
			upsert(killed, tc.want)
			if res := e.syncPastHangs(killed, 1); res.Failed != 1 {
				t.Fatalf("sync with a hung create: %+v", res)
			}

			// Killed; the Service is deleted before two restarts, both
			// while the create still hangs in HNS.
			for range 2 {
				r := e.reconciler()
				if err := r.Start(ctx); err != nil {
					t.Fatal(err)
				}
				if res := r.Sync(ctx); res.Failed+res.Pending != 0 {
					t.Fatalf("first sync after the restart: %+v", res)
				}
			}
			s := readState(t, e.stateFile)
			if len(s.CreatingLoadBalancers)+len(s.CreatingRemoteEndpoints) == 0 {
				t.Fatalf("state file after the restarts carries no declaration: %+v", s)
			}
			r := e.reconciler()
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			r.Sync(ctx)

			e.hns.SetFaults(sim.Faults{})
			<-w.returned // the abandoned create lands now
			if snap := e.snapshot(); len(snap.LoadBalancers)+len(snap.Endpoints) < 2 {
				t.Fatalf("HNS holds %+v, want the late create's object beside the pod's endpoint", snap)
			}
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.converge(r)
			if snap := e.snapshot(); len(snap.LoadBalancers) != 0 || len(snap.Endpoints) != 1 || snap.Endpoints[0].IsRemote() {
				t.Fatalf("after the repair HNS holds %d load balancers and endpoints %+v, want only the pod's endpoint", len(snap.LoadBalancers), snap.Endpoints)
			}

			// After the window the declaration is dropped: a load balancer
			// made on that frontend later is someone else's.
			e.clock.Step(carriedWindowCalls*DefaultCallTimeout + 1)
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			r.Sync(ctx)
			if s := readState(t, e.stateFile); len(s.LoadBalancers)+len(s.RemoteEndpoints)+len(s.CreatingLoadBalancers)+len(s.CreatingRemoteEndpoints) != 0 {
				t.Errorf("state file after the window: %+v", s)
			}
			foreign := e.foreignOn(lb("10.96.0.10", 80), "10.244.1.11")
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.converge(r)
			if !e.hasLB(foreign) {
				t.Error("a load balancer made on the frontend after the window was deleted")
			}
		})
	}
}

// The same late create on a tenant's frontend whose Service is still
// desired: the restarted reconciler finds it holding the frontend before
// its own create and takes it for the late create, not for a foreign load
// balancer it must keep away from.
func TestLateCreateOnATenantFrontendIsNotForeign(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(0)
	e.local("10.244.1.10")
	tenant := externalLB("203.0.113.5", 80, loc("10.244.1.10"))
	killed := w.watch(e.started())
	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpCreateLoadBalancer}})
	upsert(killed, tenant)
	// A new tenant frontend waits for a listing to check that no foreign
	// load balancer holds it; then its create hangs.
	if res := killed.Sync(ctx); !res.ListingWanted {
		t.Fatalf("first sync: %+v, want the frontend waiting for a listing", res)
	}
	if err := killed.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if res := e.syncPastHangs(killed, 1); res.Failed != 1 {
		t.Fatalf("sync with a hung create: %+v", res)
	}

	r := e.reconciler()
	upsert(r, tenant)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	e.hns.SetFaults(sim.Faults{})
	<-w.returned // lands between the restart's listing and its first Sync
	late := e.hnsLB(tenant.Key)
	if late == nil {
		t.Fatal("the abandoned create did not land")
	}
	e.converge(r)
	if res := r.Sync(ctx); len(res.ForeignHeld) != 0 || res.Failed != 0 {
		t.Fatalf("sync after the late create: %+v, want the frontend ours", res)
	}
	e.assertRealized([]intent.LB{tenant})
	if st := statusOf(r, tenant.Key); st.RealizedID != late.ID {
		t.Errorf("status %+v, want the late create %s adopted", st, late.ID)
	}
}

// keysOf lists each key of the sets once, whichever sets hold it.
func TestKeysOfListsEachKeyOnce(t *testing.T) {
	a := map[string]struct{}{"x": {}, "y": {}}
	b := map[string]struct{}{"y": {}, "z": {}}
	c := map[string]struct{}{"x": {}, "w": {}}
	got := keysOf(a, nil, b, c)
	slices.Sort(got)
	if want := []string{"w", "x", "y", "z"}; !slices.Equal(got, want) {
		t.Errorf("keysOf = %v, want %v", got, want)
	}
	if got := keysOf[string](); len(got) != 0 {
		t.Errorf("keysOf of no sets = %v", got)
	}
}

// A node port's create abandoned at its deadline, then HNS restarts
// (keeping everything, or dropping each set it may drop), the CNI makes the
// network again, and hnsproxy exits for it; the create lands before the
// replacement, between the exit and the restart, or after the restart
// listed HNS, and HNS either applied it when the call came or only when
// the call returned. The restarted reconciler, on the new network and with
// the Service gone, leaves no load balancer: it claims the late create
// through the state file's declaration (interrupted) or its carrying.
func TestLateCreateAcrossANetworkReplacementIsNotLeaked(t *testing.T) {
	type when int
	const (
		beforeReplacement when = iota
		beforeRestart
		afterRestart
	)
	for _, hang := range []string{"applied when released", "applied when called"} {
		for _, loss := range append([]sim.RestartLoss{"no restart"}, sim.RestartLosses...) {
			for _, lands := range []when{beforeReplacement, beforeRestart, afterRestart} {
				restart := string(loss)
				if loss == sim.RestartKeepsAll {
					restart = "restart keeps all"
				}
				name := fmt.Sprintf("%s/%s/lands %s", hang, restart, []string{"before the replacement", "before the restart", "after the restart"}[lands])
				t.Run(name, func(t *testing.T) {
					e := newEnv(t, sim.ProfileWS2022)
					w := e.withHangWatch(0)
					watched := e.tweak
					e.tweak = func(o *Options) { watched(o); o.NetworkName = "cbr0" }
					e.local("10.244.1.10")
					r := w.watch(e.started())
					f := sim.Faults{Hang: []sim.Op{sim.OpCreateLoadBalancer}}
					if hang == "applied when called" {
						f = sim.Faults{HangReply: []sim.Op{sim.OpCreateLoadBalancer}}
					}
					e.hns.SetFaults(f)
					nodePort := lb("", 30673, loc("10.244.1.10"))
					nodePort.Origin = intent.OriginNodePort
					upsert(r, nodePort)
					if res := e.syncPastHangs(r, 1); res.Failed != 1 {
						t.Fatalf("sync with a hung create: %+v", res)
					}
					land := func() {
						e.hns.SetFaults(sim.Faults{})
						<-w.returned
					}
					if lands == beforeReplacement {
						land()
					}
					if loss != "no restart" {
						if err := e.hns.RestartLosing(0, loss); err != nil {
							t.Fatal(err)
						}
					}
					was := e.netID
					now := e.replaceNetwork(true)
					wantChanged(t, r.Repair(ctx), was, now)
					if lands == beforeRestart {
						land()
					}

					e.netID = now
					e.local("10.244.1.10")
					r2 := e.reconciler()
					if err := r2.Start(ctx); err != nil {
						t.Fatal(err)
					}
					e.converge(r2)
					if lands == afterRestart {
						land()
					}
					if err := r2.Repair(ctx); err != nil {
						t.Fatal(err)
					}
					e.converge(r2)
					if snap := e.snapshot(); len(snap.LoadBalancers) != 0 {
						t.Errorf("load balancers left: %+v", snap.LoadBalancers)
					}
				})
			}
		}
	}
}

// Found by the fault soak (seed 40): a tenant frontend hnsproxy was
// creating when it was killed, and another agent makes its load balancer
// there, over its own remote endpoint: before the restart (Start finds it
// on the declared frontend) or after it, while the declaration is carried.
// That load balancer cannot be the late create: a create of hnsproxy's
// names only local endpoints and its own remote ones. It is left alone, as
// foreign, by Start, by the Sync that meets it as a blocker and by the
// drift repair; the tenant's Service is reported.
func TestAnotherAgentsLoadBalancerOnADeclaredFrontendIsNotClaimed(t *testing.T) {
	for _, beforeRestart := range []bool{true, false} {
		t.Run(fmt.Sprintf("made before the restart %v", beforeRestart), func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			e.local("10.244.1.10")
			tenant := externalLB("203.0.113.5", 80, loc("10.244.1.10"))
			killed := e.started()
			upsert(killed, tenant)
			// A new tenant frontend waits for a listing that checks for a
			// foreign holder; then its create loses its reply (HNS made
			// nothing).
			if res := killed.Sync(ctx); !res.ListingWanted {
				t.Fatalf("first sync: %+v, want the frontend waiting for a listing", res)
			}
			if err := killed.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeTimeout}})
			if res := killed.Sync(ctx); res.Failed != 1 {
				t.Fatalf("sync with a lost reply: %+v", res)
			}
			e.hns.SetFaults(sim.Faults{})

			agentLB := func() string {
				agentEP := buildRemoteEndpoint(e.netID, intent.RemoteEndpoint{IP: "10.250.0.1"})
				agentEP.Name = "other-agent-0"
				ep, err := e.hns.CreateEndpoint(ctx, e.netID, agentEP)
				if err != nil {
					t.Fatal(err)
				}
				theirs := tenant
				theirs.InternalPort = 9000
				l, err := e.hns.CreateLoadBalancer(ctx, BuildLB(&theirs, []string{ep.ID}))
				if err != nil {
					t.Fatal(err)
				}
				return l.ID
			}
			// Killed; the agent's load balancer made before or after the
			// restart, whose declaration then found nothing and is carried.
			var agent string
			if beforeRestart {
				agent = agentLB()
			}
			r := e.reconciler()
			upsert(r, tenant)
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if !beforeRestart {
				if !has(r.carried.lbs, tenant.Key) {
					t.Fatalf("the tenant frontend is not carried: %+v", r.carried)
				}
				agent = agentLB()
			}

			for range 3 { // the create is refused, the listing shows the holder
				if r.Sync(ctx).ListingWanted {
					if err := r.Lookup(ctx); err != nil {
						t.Fatal(err)
					}
				}
				next, _ := r.NextRetry()
				e.clock.Step(max(0, next.Sub(e.clock.Now())))
			}
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			res := r.Sync(ctx)
			if !e.hasLB(agent) {
				t.Fatal("the other agent's load balancer was deleted")
			}
			if len(res.ForeignHeld) != 1 || res.ForeignHeld[0].Key != tenant.Key || res.ForeignHeld[0].ID != agent {
				t.Errorf("foreign-held frontends %+v, want %s held by %s", res.ForeignHeld, tenant.Key, agent)
			}
			if s := readState(t, e.stateFile); slices.Contains(s.LoadBalancers, agent) {
				t.Errorf("the state file owns the other agent's load balancer: %+v", s)
			}
		})
	}
}
