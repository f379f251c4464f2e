package reconciler

import (
	"os"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestRemoteEndpointsKeptUnderEveryEcho: on a dual-stack l2bridge node,
// load balancers whose backends are remote endpoints of both families
// (kube-proxy's remote endpoints on l2bridge carry no provider address)
// write nothing in a repair period, across a restart and across one that
// lost the state file, whatever liberties HNS takes with its answers.
// Under ipv6-long-form every restart deleted hnsproxy's own IPv6 remote
// endpoint as no longer desired, with the load balancer using it, and
// recreated both: an outage of the Service at each restart.
func TestRemoteEndpointsKeptUnderEveryEcho(t *testing.T) {
	for name, echo := range echoProfiles(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2025)
			e.hns.SetEcho(echo)
			cluster4 := lb("10.96.0.20", 80, rem("10.244.2.20", ""))
			cluster6 := lb("fd00:10:96::20", 80, rem("fd00:10:244:2::20", ""))
			cluster6.Key.Family, cluster6.SourceVIP = intent.IPv6, "fd00:10:244:1::2"
			want := []intent.LB{cluster4, cluster6}
			r := e.started(want...)
			e.clock.Step(5 * time.Minute)
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			if res := r.Sync(ctx); res.Pending+res.Failed != 0 || e.counters().Writes() != 0 {
				t.Errorf("a repair period: %+v, calls %v", res, e.counters().Calls)
			}
			_, res := e.start(e.hns, want...)
			if c := e.counters(); c.Writes() != 0 || res.Pending+res.Failed != 0 {
				t.Errorf("restart: %+v, calls %v", res, c.Calls)
			}
			if err := os.Remove(e.stateFile); err != nil {
				t.Fatal(err)
			}
			_, res = e.start(e.hns, want...)
			if c := e.counters(); c.Writes() != 0 || res.Pending+res.Failed != 0 {
				t.Errorf("restart without a state file: %+v, calls %v", res, c.Calls)
			}
			e.assertRealized(want)
		})
	}
}
