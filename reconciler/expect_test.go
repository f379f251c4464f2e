package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// Expect only sizes maps: what was handed over before it stays, and the
// node converges as without it.
func TestExpectKeepsWhatWasHandedOver(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	e.local("10.244.1.10")
	before := lb("10.96.0.1", 80, loc("10.244.1.10"), rem("10.244.2.1", "192.168.0.2"))
	after := lb("10.96.0.2", 80, loc("10.244.1.10"), rem("10.244.2.2", "192.168.0.2"))
	r := e.reconciler()
	upsert(r, before)
	r.Expect(1000, 1000)
	r.UpsertEndpoint(intent.EndpointOf(after.Backends[1]))
	r.Upsert(after)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if res := r.Sync(ctx); res.Failed+res.Pending != 0 || res.Created != 4 {
		t.Fatalf("sync after Expect: %+v, want 2 load balancers and 2 remote endpoints created", res)
	}
	e.assertRealized([]intent.LB{before, after})
}
