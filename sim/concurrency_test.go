package sim

import (
	"fmt"
	"sync"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Many clients at once (a proxy, a CNI, tests): every call is served whole,
// the rules hold, and counters add up. Run with -race.
func TestConcurrentClients(t *testing.T) {
	h := newSim(t, ProfileWS2025)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	h.SetFaults(Faults{ErrorRate: map[Op]float64{AnyOp: 0.05}})
	const workers, perWorker = 8, 40
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				ep, err := h.CreateEndpoint(ctx, n.ID, remoteDoc(fmt.Sprintf("10.%d.%d.1", 100+w, i), ""))
				if err != nil {
					continue
				}
				// Every worker races for the same frontends: at most one wins each.
				lb, err := h.CreateLoadBalancer(ctx, lbDoc(fmt.Sprintf("10.96.1.%d", i), 80, ep.ID))
				if err == nil && i%2 == 0 {
					_, _ = h.UpdateLoadBalancer(ctx, lb.ID, lbDoc(fmt.Sprintf("10.96.1.%d", i), 80, ep.ID))
				}
				_, _ = h.ListLoadBalancers(ctx)
				_ = h.Snapshot()
				_ = h.Counters()
				if i%3 == 0 {
					_ = h.DeleteEndpoint(ctx, ep.ID)
				}
			}
		}(w)
	}
	wg.Wait()

	snap := h.Snapshot()
	frontends := map[string]bool{}
	endpoints := map[string]bool{}
	for _, e := range snap.Endpoints {
		endpoints[e.ID] = true
	}
	for _, lb := range snap.LoadBalancers {
		if frontends[lb.FrontendVIPs[0]] {
			t.Errorf("two load balancers on %s", lb.FrontendVIPs[0])
		}
		frontends[lb.FrontendVIPs[0]] = true
		for _, b := range lb.HostComputeEndpoints {
			if !endpoints[b] {
				t.Errorf("load balancer %s has deleted backend %s", lb.ID, b)
			}
		}
	}
	c := h.Counters()
	if got := c.Count(OpCreateEndpoint); got != workers*perWorker {
		t.Errorf("%d endpoint creates counted, made %d", got, workers*perWorker)
	}
	if got := c.CountResult(OpCreateEndpoint, ResultOK) - c.CountResult(OpDeleteEndpoint, ResultOK); got != len(snap.Endpoints) {
		t.Errorf("%d endpoints stored, counters say %d", len(snap.Endpoints), got)
	}
}
