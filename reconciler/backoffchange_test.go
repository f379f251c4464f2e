package reconciler

import (
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// backoffOf reads an object's retry: how long until it, and after how many
// unsuccessful attempts.
type backoffOf func() (retryIn time.Duration, attempts int)

func (e *env) lbBackoff(r *Reconciler, key intent.LBKey) backoffOf {
	return func() (time.Duration, int) {
		st := statusOf(r, key)
		return st.NextRetry.Sub(e.clock.Now()), st.Attempts
	}
}

func (e *env) epBackoff(r *Reconciler, ip string) backoffOf {
	return func() (time.Duration, int) {
		for _, st := range r.EndpointStatuses() {
			if st.Endpoint.IP == ip {
				return st.NextRetry.Sub(e.clock.Now()), st.Attempts
			}
		}
		e.t.Fatalf("no remote endpoint %s", ip)
		return 0, 0
	}
}

// refuse has HNS refuse every call of ops with 0x57 (invalid parameter).
func (e *env) refuse(ops ...sim.Op) {
	f := sim.Faults{ErrorRate: map[sim.Op]float64{}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}}
	for _, op := range ops {
		f.ErrorRate[op] = 1
	}
	e.hns.SetFaults(f)
}

// backoffStartsOver has HNS refuse ops with 0x57 and runs Syncs, each at
// the last one's retry, until the object's backoff reached RetryMax (16 s
// in tests); then change changes what is desired of it, and the Sync right
// after must call op once (the change tried at once, refused) and leave
// the object's retry RetryBase away after one attempt: its backoff started
// over. Once HNS accepts again, r must converge to want.
func (e *env) backoffStartsOver(r *Reconciler, backoff backoffOf, change func(), op sim.Op, want []intent.LB, ops ...sim.Op) {
	e.t.Helper()
	e.refuse(ops...)
	o := e.options()
	for i := 0; ; i++ {
		if res := r.Sync(ctx); res.Failed == 0 {
			e.t.Fatalf("sync %+v: want the refused object failed", res)
		}
		if in, _ := backoff(); in == o.RetryMax {
			break
		} else if i == 10 {
			e.t.Fatalf("backoff never reached %v", o.RetryMax)
		}
		next, _ := r.NextRetry()
		e.clock.SetTime(next)
	}

	change()
	calls := e.counters().Count(op)
	if res := r.Sync(ctx); res.Failed != 1 {
		e.t.Fatalf("sync after the change: %+v, want one object refused", res)
	}
	if n := e.counters().Count(op) - calls; n != 1 {
		e.t.Fatalf("%d calls of %s in the Sync after the change, want 1: it is tried at once", n, op)
	}
	if in, attempts := backoff(); in != o.RetryBase || attempts != 1 {
		e.t.Errorf("changed object refused once: retry in %v after %d attempts, want %v after 1 (the old one's backoff was %v)",
			in, attempts, o.RetryBase, o.RetryMax)
	}
	e.hns.SetFaults(sim.Faults{})
	e.converge(r)
	e.assertRealized(want)
}

// A load balancer HNS refused until its backoff reached the cap, then
// changed (the user fixed the Service), is a new object: it is tried at the
// next Sync, not at the old one's retry, and should HNS refuse that too,
// its backoff starts over at RetryBase (as a changed object's in
// cilium/statedb's reconciler). It kept the old object's count: the fixed
// Service, refused once more for a passing reason, waited RetryMax (2
// minutes by default).
func TestChangedLoadBalancerStartsItsBackoffOver(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	r := e.started()
	want := lb("10.96.0.10", 80, loc("10.244.1.10"))
	upsert(r, want)
	e.backoffStartsOver(r, e.lbBackoff(r, want.Key), func() {
		want.InternalPort = 8081
		upsert(r, want)
	}, sim.OpCreateLoadBalancer, []intent.LB{want}, sim.OpCreateLoadBalancer)
}

// The same for a remote endpoint whose spec changed (its pod's node moved).
func TestChangedRemoteEndpointStartsItsBackoffOver(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	r := e.started()
	want := lb("10.96.0.10", 80, rem("10.244.2.5", "192.168.1.2"))
	upsert(r, want)
	e.backoffStartsOver(r, e.epBackoff(r, "10.244.2.5"), func() {
		want.Backends = []intent.Backend{rem("10.244.2.5", "192.168.1.3")}
		upsert(r, want)
	}, sim.OpCreateEndpoint, []intent.LB{want}, sim.OpCreateEndpoint)
}

// The same for a Service deleted after HNS refused its load balancer's
// update until the backoff reached the cap: a refused delete is retried
// after RetryBase, not after the update's backoff.
func TestDeletedLoadBalancerStartsItsBackoffOver(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	e.local("10.244.1.11")
	want := lb("10.96.0.10", 80, loc("10.244.1.10"), loc("10.244.1.11"))
	r := e.started(want)
	want.Backends = want.Backends[:1]
	upsert(r, want)
	e.backoffStartsOver(r, e.lbBackoff(r, want.Key), func() { remove(r, want.Key) },
		sim.OpDeleteLoadBalancer, nil, sim.OpUpdateLoadBalancer, sim.OpDeleteLoadBalancer, sim.OpCreateLoadBalancer)
}

// The same for a remote endpoint no longer desired after HNS refused its
// replacement (its pod's node moved) until the backoff reached the cap:
// its delete, which waits for its load balancer's (refused), is retried
// after RetryBase.
func TestUnwantedRemoteEndpointStartsItsBackoffOver(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := lb("10.96.0.10", 80, rem("10.244.2.5", "192.168.1.2"))
	r := e.started(want)
	want.Backends = []intent.Backend{rem("10.244.2.5", "192.168.1.3")}
	upsert(r, want)
	e.backoffStartsOver(r, e.epBackoff(r, "10.244.2.5"), func() { remove(r, want.Key) },
		sim.OpDeleteLoadBalancer, nil, sim.OpCreateEndpoint, sim.OpDeleteEndpoint,
		sim.OpUpdateLoadBalancer, sim.OpDeleteLoadBalancer, sim.OpCreateLoadBalancer)
}

// A load balancer that changes at every Sync while HNS refuses every
// version is tried once per Sync, and between changes no sooner than its
// backoff: a backoff that starts over is no hot loop. Each Sync here comes
// at the earliest retry NextRetry gives, as the proxier schedules them.
func TestFlappingRefusedLoadBalancerIsTriedOncePerSync(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	r := e.started()
	e.refuse(sim.OpCreateLoadBalancer)
	want := lb("10.96.0.10", 80, loc("10.244.1.10"))
	const syncs = 30
	for i := range syncs {
		want.InternalPort = 8080 + uint16(i%2)
		upsert(r, want)
		creates := e.counters().Count(sim.OpCreateLoadBalancer)
		if res := r.Sync(ctx); res.Failed != 1 {
			t.Fatalf("sync %d: %+v, want its create refused", i, res)
		}
		if n := e.counters().Count(sim.OpCreateLoadBalancer) - creates; n != 1 {
			t.Fatalf("sync %d made %d creates, want 1", i, n)
		}
		next, ok := r.NextRetry()
		if in := next.Sub(e.clock.Now()); !ok || in < e.options().RetryBase {
			t.Fatalf("after sync %d the next retry is in %v (%v), want at least RetryBase %v", i, in, ok, e.options().RetryBase)
		}
		e.clock.SetTime(next)
	}
	if n := e.counters().Count(sim.OpCreateLoadBalancer); n != syncs {
		t.Errorf("%d creates in %d syncs, want one each", n, syncs)
	}
}
