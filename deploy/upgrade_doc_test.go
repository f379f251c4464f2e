package deploy

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// TestDaemonSetRollsWithoutSurge: an upgrade replaces one node's pod at a
// time, the old one gone before the new one starts. With a surge the
// controller would remove the old pod only once the new one is available,
// and it never is: the scheduler keeps it off the node whose host ports
// (a hostNetwork pod's container ports) the old one holds, and were it
// placed, the state file's lock would keep it from running. The rollout
// would stop at the first node. docs/operators.md's upgrade section says
// so and says how to upgrade and downgrade.
func TestDaemonSetRollsWithoutSurge(t *testing.T) {
	for _, dir := range []string{".", "replace-kube-proxy"} {
		ds := build(t, dir)["DaemonSet"].(*appsv1.DaemonSet)
		s := ds.Spec.UpdateStrategy
		if s.Type != appsv1.RollingUpdateDaemonSetStrategyType || s.RollingUpdate == nil {
			t.Fatalf("%s: update strategy %+v, want RollingUpdate", dir, s)
		}
		if u := s.RollingUpdate.MaxUnavailable; u == nil || *u != intstr.FromInt32(1) {
			t.Errorf("%s: maxUnavailable %v, want 1 (one node at a time)", dir, u)
		}
		if surge := s.RollingUpdate.MaxSurge; surge != nil && surge.IntValue() != 0 {
			t.Errorf("%s: maxSurge %v: a surge pod never becomes available beside the old one (host ports, the state file lock), and the rollout stops", dir, surge)
		}
	}
	section := doctest.Section(t, "docs/operators.md", "## Upgrading and downgrading hnsproxy")
	// sc.exe stop returns before the service has stopped: the section
	// must give the stop that waits, and say so. A service moved to the
	// DaemonSet must not start again at boot beside the pod.
	for _, want := range []string{"maxSurge", "rollout undo", "Stop-Service hnsproxy", "sc.exe query hnsproxy", "start= disabled"} {
		if !strings.Contains(section, want) {
			t.Errorf("the upgrade section does not mention %s", want)
		}
	}
}
