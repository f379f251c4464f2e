package reconciler

import (
	"slices"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// told is what Options.LoadBalancerRefused was told, without the errors'
// text: the operation, the key, the origin and HNS's code.
type told struct {
	op     string
	key    intent.LBKey
	origin intent.Origin
	code   hnslb.ErrorCode
}

// Each load balancer create, modify and delete HNS refuses is told once,
// at the end of its Sync, with the key and what the load balancer is (or,
// for a delete, was) for; HNS down and deletes of what is gone already are
// not refusals. The daemon's reconciler makes its calls through the
// start-up calls' deadlines, as here.
func TestLoadBalancerRefusalsAreTold(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025) // modifies load balancers
	var got []told
	startup := NewStartupCalls(e.hns, e.options())
	e.tweak = func(o *Options) {
		o.StartupCalls = startup
		o.LoadBalancerRefused = func(f LBRefusal) {
			code, _ := hnslb.CodeOf(f.Err)
			got = append(got, told{f.Op, f.Key, f.Origin, code})
		}
	}
	e.local("10.244.1.10")
	e.local("10.244.1.11")
	cluster := lb("10.96.0.10", 80, loc("10.244.1.10"))
	health := lb("198.51.100.7", 10256, loc("10.244.1.10"))
	health.Origin = intent.OriginHealthCheck
	r := e.started(cluster, health)
	take := func(what string, want ...told) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: told %+v, want %+v", what, got, want)
		}
		got = nil
	}
	refuse := func(op sim.Op, code hnslb.ErrorCode) {
		e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{op: 1}, Errors: []hnslb.ErrorCode{code}})
	}

	nodePort := lb("", 30080, loc("10.244.1.11"))
	nodePort.Origin = intent.OriginNodePort
	refuse(sim.OpCreateLoadBalancer, hnslb.CodeInvalidIP)
	upsert(r, cluster, health, nodePort)
	r.Sync(ctx)
	take("a create refused", told{hnslb.OpCreateLoadBalancer, nodePort.Key, intent.OriginNodePort, hnslb.CodeInvalidIP})

	refuse(sim.OpUpdateLoadBalancer, hnslb.CodeInvalidParameter)
	cluster = lb("10.96.0.10", 80, loc("10.244.1.10"), loc("10.244.1.11"))
	upsert(r, cluster, health, nodePort)
	r.Sync(ctx)
	take("a modify refused", told{hnslb.OpUpdateLoadBalancer, cluster.Key, intent.OriginClusterIP, hnslb.CodeInvalidParameter})

	refuse(sim.OpDeleteLoadBalancer, 0x5) // access denied
	remove(r, health.Key)
	r.Sync(ctx)
	take("a delete refused", told{hnslb.OpDeleteLoadBalancer, health.Key, intent.OriginHealthCheck, 0x5})

	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.AnyOp: 1}}) // HNS down
	e.clock.Step(16 * time.Second)
	r.Sync(ctx)
	take("HNS down")

	e.hns.SetFaults(sim.Faults{})
	if err := e.hns.DeleteLoadBalancerOutOfBand(e.hnsLB(health.Key).ID); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	take("a delete of one gone already, and the retries that converge")
	if n := len(e.snapshot().LoadBalancers); n != 2 {
		t.Errorf("%d load balancers in HNS, want the cluster IP's and the node port's", n)
	}

	// A modify HNS does not implement turns modify off (ModifyAuto): the
	// load balancer is made again, and nothing was refused.
	refuse(sim.OpUpdateLoadBalancer, hnslb.CodeNotImplemented)
	cluster = lb("10.96.0.10", 80, loc("10.244.1.11"))
	upsert(r, cluster, nodePort)
	e.converge(r)
	take("a modify not implemented")
	if got := e.hnsLB(cluster.Key); got == nil || len(got.HostComputeEndpoints) != 1 || got.HostComputeEndpoints[0] != e.locals["10.244.1.11"] {
		t.Errorf("after modify turned off, HNS holds %+v for %s, want it on 10.244.1.11", got, cluster.Key)
	}
}

// Nobody told, nothing kept: the reconciler keeps no refusals without
// Options.LoadBalancerRefused.
func TestLoadBalancerRefusalsKeptOnlyWhenTold(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	e.local("10.244.1.10")
	r := e.started()
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidIP}})
	upsert(r, lb("10.96.0.10", 80, loc("10.244.1.10")))
	r.client.refused.note(hnslb.OpCreateLoadBalancer, nil, "", hnslb.NewError("x", hnslb.CodeInvalidIP, "refused"))
	if res := r.Sync(ctx); res.Failed == 0 {
		t.Fatalf("the create was not refused: %+v", res)
	}
	if n := len(r.client.refused.drain()); n != 0 {
		t.Errorf("%d refusals kept with nobody to tell", n)
	}
}
