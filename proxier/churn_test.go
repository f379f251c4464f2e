package proxier

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// kept are the sizes of what the proxier keeps per Service, load balancer
// or Node between syncs.
func (p *Proxier) kept() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return map[string]int{
		"reported": len(p.reported), "health": len(p.health), "tally": len(p.tally.per),
		"services": len(p.state.Services), "lbs": len(p.state.LBs), "remoteEndpoints": len(p.state.RemoteEndpoints),
		"foreignReported": len(p.foreignReported), "leftOutReported": len(p.leftOutReported),
		"unrouted": len(p.subnets.unrouted), "held": len(p.subnets.held),
	}
}

// TestChurnKeepsNothingOfDeletedServices runs generations of distinct
// Services (new names and UIDs every round; some with a problem raised as
// an event, some with a health-check node port, remote and local
// backends) through the real proxier and reconciler while HNS refuses some
// writes, deletes each generation, and checks that what the proxier and
// the reconciler keep is back where it was, not growing with the rounds.
func TestChurnKeepsNothingOfDeletedServices(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5", "10.244.1.6")
	n.start()
	n.apply(service("stay", "10.96.255.1"), slice("stay", endpoint{"10.244.1.5", nodeName}))
	n.settle()
	base, baseCounts := n.proxier.kept(), n.rec.ObjectCounts()
	ctx := context.Background()
	for g := range 6 {
		n.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 0.3, sim.OpCreateEndpoint: 0.3},
			Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}})
		var names []string
		for i := range 6 {
			name := fmt.Sprintf("g%d-svc%d", g, i)
			names = append(names, name)
			svc := service(name, fmt.Sprintf("10.96.%d.%d", g, i+1), func(s *v1.Service) {
				s.UID = types.UID(name)
				switch i % 3 {
				case 0:
					s.Spec.ExternalIPs = []string{"not-an-ip"}
				case 1:
					s.Spec.Type = v1.ServiceTypeLoadBalancer
					s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: fmt.Sprintf("203.0.113.%d", g*10+i)}}
					s.Spec.Ports[0].NodePort = int32(30000 + g*10 + i)
					s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
					s.Spec.HealthCheckNodePort = int32(31000 + g*10 + i)
				}
			})
			n.apply(svc, slice(name, endpoint{fmt.Sprintf("10.244.1.%d", 5+i%2), nodeName},
				endpoint{fmt.Sprintf("10.244.%d.%d", 2+g, i+1), "win-2"}))
		}
		n.settle()
		n.hns.SetFaults(sim.Faults{})
		for _, name := range names {
			if err := n.client.CoreV1().Services("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := n.client.DiscoveryV1().EndpointSlices("default").Delete(ctx, name+"-abc", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		n.settle()
		n.repaired()
		n.settle()
		for what, got := range n.proxier.kept() {
			if got != base[what] {
				t.Errorf("generation %d: the proxier keeps %d %s, %d before the churn", g, got, what, base[what])
			}
		}
		if got := n.rec.ObjectCounts(); got != baseCounts {
			t.Errorf("generation %d: the reconciler tracks %+v, %+v before the churn", g, got, baseCounts)
		}
	}
}
