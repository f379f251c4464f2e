package proxier

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/hnsproxy/hnsproxy/sim"
)

// A create HNS refused as down may have been applied, so it waits for a
// lookup listing, and those listings, refused too while HNS is down, back
// off (0.1, 0.2, 0.4 s ... up to 30 s). Once HNS answers again (here
// without a restart, so no drift repair is started), the lookup is made
// within a probe interval or so (0.25 s), not when the backoff of the
// listings HNS refused runs out: 6.4 s later here, 30 s after a long
// outage. The wait allows 4 s, for a loaded machine under -race.
func TestRefusedCreateIsLookedUpOnceHNSAnswers(t *testing.T) {
	n, _ := observedNode(t, "ws2022", "10.244.1.5")
	n.settle()
	n.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.AnyOp: 1}})
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("seven lookup listings refused", func() bool {
		return n.hns.Counters().CountResult(sim.OpListLoadBalancers, "RPCServerUnavailable") >= 7
	})
	n.hns.SetFaults(sim.Faults{})
	back := time.Now()
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 4*time.Second, true,
		func(context.Context) (bool, error) { return len(n.lbs()) == 1, nil }); err != nil {
		t.Fatalf("the load balancer was not made within %v of HNS answering again", time.Since(back))
	}
}
