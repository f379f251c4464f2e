package proxier

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestAffinitySwitchPerProfile: an operator turns sessionAffinity ClientIP
// on and off, changes its timeout and scales the Service while it is on,
// on each HNS profile. Every load balancer of the Service (ClusterIP,
// NodePort, external IP, ingress IP) gets the same distribution, and the
// health-check load balancer on the ingress IP none, as winkernel gives it
// none. A change of affinity is one delete and one create per load
// balancer, on Windows Server 2025 too (hnsproxy modifies only backends);
// a timeout change writes nothing (HNS has no timeout); HNS without
// affinity (Windows Server 2019) is never written for it. The events say
// what HNS cannot do once per change of what it cannot do: a problem that
// ended and comes back is raised again.
func TestAffinitySwitchPerProfile(t *testing.T) {
	const gateway = "10.244.1.2"
	pods := []string{"10.244.1.5", "10.244.1.6", "10.244.1.7"}
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			n := newTestNode(t, profile, append([]string{gateway}, pods...)...)
			n.config.ForwardHealthCheckVIP = true
			n.healthCheckGateway = func(context.Context) (map[intent.IPFamily]netip.Addr, error) {
				return map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr(gateway)}, nil
			}
			n.start()
			supported := n.hns.Profile().Features().SessionAffinity
			svc := func(affinity bool, timeout int32) *v1.Service {
				return service("sticky", "10.96.0.70", func(s *v1.Service) {
					s.Spec.Type = v1.ServiceTypeLoadBalancer
					s.Spec.Ports[0].NodePort = 30070
					s.Spec.ExternalIPs = []string{"192.0.2.70"}
					s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: "198.51.100.70"}}
					if affinity {
						s.Spec.SessionAffinity = v1.ServiceAffinityClientIP
						s.Spec.SessionAffinityConfig = &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: ptr.To(timeout)}}
					}
				})
			}
			backends := func(k int) any {
				var eps []endpoint
				for _, ip := range pods[:k] {
					eps = append(eps, endpoint{ip, nodeName})
				}
				return slice("sticky", eps...)
			}
			const serviceLBs = 4 // ClusterIP, NodePort, external IP, ingress IP

			// step applies objs and checks the outcome: the distribution
			// every Service load balancer has, how many were rewritten
			// (replaced, or modified where updates says so), and the
			// events the change raised.
			step := func(name string, dist hnslb.Distribution, rewritten int, updates bool, wantEvents []string, objs ...any) {
				t.Helper()
				n.hns.ResetCounters()
				n.apply(objs...)
				n.settle()
				lbs := n.lbs()
				if len(lbs) != serviceLBs+1 {
					t.Fatalf("%s: %d load balancers, want %d and a health check: %+v", name, len(lbs), serviceLBs, lbs)
				}
				for _, lb := range lbs {
					want := dist
					if lb.Port == 10256 {
						want = hnslb.DistributionNone // the health check: winkernel sets no affinity on it
					}
					if lb.Dist != want {
						t.Errorf("%s: load balancer %s:%d has distribution %d, want %d", name, lb.Frontend, lb.Port, lb.Dist, want)
					}
				}
				c := n.hns.Counters()
				if w := c.Count(sim.OpCreateEndpoint) + c.Count(sim.OpDeleteEndpoint); w != 0 {
					t.Errorf("%s: %d endpoint writes, want none (%+v)", name, w, c.Calls)
				}
				created, deleted := c.CountResult(sim.OpCreateLoadBalancer, sim.ResultOK), c.CountResult(sim.OpDeleteLoadBalancer, sim.ResultOK)
				modified := c.CountResult(sim.OpUpdateLoadBalancer, sim.ResultOK)
				want := [3]int{rewritten, rewritten, 0}
				if updates {
					want = [3]int{0, 0, rewritten}
				}
				if got := [3]int{created, deleted, modified}; got != want || c.Writes() != rewritten*2-modified {
					t.Errorf("%s: %d creates, %d deletes, %d modifies (%d writes), want %v (%+v)", name, created, deleted, modified, c.Writes(), want, c.Calls)
				}
				var got []string
				for _, e := range n.drainEvents() {
					if strings.Contains(e, "SessionAffinity") {
						got = append(got, e)
					}
				}
				if len(got) != len(wantEvents) {
					t.Errorf("%s: events %q, want one each of %q", name, got, wantEvents)
					return
				}
				for i, reason := range wantEvents {
					if !strings.Contains(got[i], reason) {
						t.Errorf("%s: event %q, want %s", name, got[i], reason)
					}
				}
			}

			n.apply(svc(false, 0), backends(2))
			n.eventually("the Service's load balancers", func() bool { return len(n.lbs()) == serviceLBs+1 })
			n.settle()
			n.drainEvents()

			sticky, replaced := hnslb.DistributionNone, 0
			onEvent := []string{desired.ReasonSessionAffinityUnsupported}
			timeoutEvent := []string(nil)
			if supported {
				sticky, replaced = hnslb.DistributionSourceIP, serviceLBs
				onEvent, timeoutEvent = nil, []string{desired.ReasonSessionAffinityTimeout}
			}
			modifies := n.hns.Profile().Features().ModifyLoadBalancer
			step("affinity on", sticky, replaced, false, onEvent, svc(true, 10800))
			step("timeout changed", sticky, 0, false, timeoutEvent, svc(true, 60))
			step("timeout back to the default", sticky, 0, false, nil, svc(true, 10800))
			step("scaled up while sticky", sticky, serviceLBs, modifies, nil, backends(3))
			step("scaled down while sticky", sticky, serviceLBs, modifies, nil, backends(2))
			step("affinity off", hnslb.DistributionNone, replaced, false, nil, svc(false, 0))
			step("affinity on again", sticky, replaced, false, onEvent, svc(true, 10800))
		})
	}
}
