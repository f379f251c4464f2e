package reconciler

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/hnsproxy/hnsproxy/sim"
)

// TestAnUpgradeFromAStateFileWithoutBaselinesRewritesNothing: a state file
// an hnsproxy from before baselines wrote (or rewrote after a downgrade to
// one) owns its load balancers by ID alone. The first start of this
// version adopts them by adoptionMatch and writes nothing
// (docs/reliability.md, "Echo-proof identity", State file), on every
// build. Where HNS modifies (Windows Server 2025) it used to take each
// such load balancer for one a lost create made, whose distribution is
// unknown, and replaced every one that wants none: a delete and a create,
// a moment without its frontend, for every Service on the node.
func TestAnUpgradeFromAStateFileWithoutBaselinesRewritesNothing(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			want := e.echoServices()
			e.started(want...)
			st, err := loadState(e.stateFile)
			if err != nil {
				t.Fatal(err)
			}
			// What an older hnsproxy writes: the owned IDs only.
			if err := os.WriteFile(e.stateFile, olderStateFile(t, st), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(journalPath(e.stateFile)); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			e.hns.ResetCounters()
			r, res := e.start(e.hns, want...)
			if r.takeover || len(r.ownedLBs) != len(want) {
				t.Fatalf("the state file was not read as an older hnsproxy's: takeover %v, owned %v", r.takeover, r.ownedLBs)
			}
			if c := e.counters(); c.Writes() != 0 || res.Pending+res.Failed != 0 {
				t.Errorf("start on a state file without baselines: %+v, calls %v", res, c.Calls)
			}
		})
	}
}

// olderStateFile is what an hnsproxy from before baselines writes for st:
// the owned IDs only.
func olderStateFile(t *testing.T, st *stateFile) []byte {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"version": 1, "loadBalancers": st.LoadBalancers, "remoteEndpoints": st.RemoteEndpoints})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
