package proxier

import (
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestDSRSwitchAtRestartRewritesOnlyClusterIPs: an operator turns
// --enable-dsr on (or off) and hnsproxy restarts, as a DaemonSet or config
// change restarts it. --enable-dsr is only the ClusterIP load balancers'
// DSR flag (winkernel: proxier.isDSR); NodePort, external and ingress load
// balancers take DSR from externalTrafficPolicy Local and preserve-destination
// whatever the flag. So the restart rewrites the ClusterIP load balancers and
// leaves every other object as it is: no remote endpoint and no other load
// balancer is written, and traffic keeps flowing through them.
func TestDSRSwitchAtRestartRewritesOnlyClusterIPs(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, mode := range []desired.NetworkMode{desired.L2Bridge, desired.Overlay} {
			for _, from := range []bool{false, true} {
				t.Run(profile+"/"+string(mode)+"/"+map[bool]string{false: "on", true: "off"}[from], func(t *testing.T) {
					c := newSimCluster(t, clusterSpec{profile: profile, mode: mode, dsr: from, nodes: threeNodes()})
					c.apply(flowServices()...)
					c.converge()
					n := c.node("win-1")
					before := n.lbs()
					n.stop()
					n.config.EnableDSR = !from
					n.hns.ResetCounters()
					n.start()
					c.converge()
					after := n.lbs()
					if len(after) != len(before) {
						t.Fatalf("%d load balancers before the switch, %d after:\nbefore %+v\nafter  %+v", len(before), len(after), before, after)
					}
					clusterIPs := 0
					for i := range after {
						b, a := before[i], after[i]
						isCluster := strings.HasPrefix(a.Frontend, "10.96.")
						want := b
						if isCluster {
							clusterIPs++
							want.Flags ^= hnslb.LoadBalancerFlagsDSR
						}
						if !sameLBView(a, want) {
							t.Errorf("after the switch %+v, want %+v", a, want)
						}
					}
					cnt := n.hns.Counters()
					if w := cnt.Count(sim.OpCreateEndpoint) + cnt.Count(sim.OpDeleteEndpoint); w != 0 {
						t.Errorf("the switch wrote %d endpoints, want none (%+v)", w, cnt.Calls)
					}
					rewrites := cnt.CountResult(sim.OpUpdateLoadBalancer, sim.ResultOK)
					if rewrites == 0 {
						rewrites = cnt.CountResult(sim.OpCreateLoadBalancer, sim.ResultOK)
						if d := cnt.Count(sim.OpDeleteLoadBalancer); d != rewrites {
							t.Errorf("%d load balancers created and %d deleted, want the same", rewrites, d)
						}
					}
					if rewrites != clusterIPs {
						t.Errorf("the switch rewrote %d load balancers, want the %d ClusterIP ones (%+v)", rewrites, clusterIPs, cnt.Calls)
					}
				})
			}
		}
	}
}

func sameLBView(a, b lbView) bool {
	return a.Frontend == b.Frontend && a.Port == b.Port && a.Internal == b.Internal && a.Flags == b.Flags &&
		a.PortFlag == b.PortFlag && a.Dist == b.Dist && strings.Join(a.Backends, ",") == strings.Join(b.Backends, ",")
}
