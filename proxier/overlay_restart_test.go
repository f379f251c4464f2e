package proxier

import (
	"reflect"
	"testing"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// TestOverlayRestartWithNothingChangedWritesNothing: after a restart on
// overlay (source-VIP and service-VIP endpoints, remote endpoints with
// provider addresses) the proxier adopts what HNS holds without a write.
func TestOverlayRestartWithNothingChangedWritesNothing(t *testing.T) {
	for _, dsr := range []bool{false, true} {
		c := newSimCluster(t, clusterSpec{profile: "ws2022", mode: desired.Overlay, dsr: dsr, nodes: threeNodes()})
		c.apply(flowServices()...)
		c.converge()
		n := c.node("win-1")
		before := n.lbs()
		n.stop()
		n.hns.ResetCounters()
		n.start()
		c.converge()
		if w := n.hns.Counters().Writes(); w != 0 {
			t.Errorf("dsr=%t: restart made %d HNS writes, want 0 (%+v)", dsr, w, n.hns.Counters().Calls)
		}
		if after := n.lbs(); !reflect.DeepEqual(before, after) {
			t.Errorf("dsr=%t: load balancers changed across the restart:\nbefore %+v\nafter  %+v", dsr, before, after)
		}
	}
}
