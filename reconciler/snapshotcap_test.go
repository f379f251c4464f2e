package reconciler

import (
	"fmt"
	"sync"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// The learned backend cap a reader gets is the one of the statuses it gets:
// a reader meeting the flush that ends the Sync which learned it (its
// statuses still being gathered) must not get the new cap beside the old
// statuses. A race, so a few rounds; correct code never fails it.
func TestLearnedCapComesWithItsStatuses(t *testing.T) {
	for round := range 5 {
		t.Run(fmt.Sprint("round", round), func(t *testing.T) {
			e, d := capEnv(t, sim.ProfileWS2022Cap64, true)
			lbs := []intent.LB{d}
			for i := range 1500 { // a flush long enough for a reader to meet
				lbs = append(lbs, lb(fmt.Sprintf("10.97.%d.%d", i/250, i%250), 80, loc("10.244.1.10")))
			}
			r := e.reconciler()
			upsert(r, lbs...)
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			r.StatusSnapshot() // a reader asked: flushes hand over from here
			before := walkOf(t, r)

			stop := make(chan struct{})
			var reads []*StatusSnapshot // each new one; digested after, as a read must be quick to meet the flush
			var wg sync.WaitGroup
			readUntil(&wg, stop, func() {
				if s := r.StatusSnapshot(); len(reads) == 0 || reads[len(reads)-1] != s {
					reads = append(reads, s)
				}
			})
			if res := r.Sync(ctx); res.LearnedBackendCap == 0 {
				t.Fatalf("no cap learned: %+v", res)
			}
			close(stop)
			wg.Wait()
			after := walkOf(t, r)
			for n, s := range reads {
				if d := digestOf(t, s.LoadBalancers, s.RemoteEndpoints, s.LearnedBackendCap); d != before.digest && d != after.digest {
					t.Fatalf("read %d of %d is the status neither before nor after the Sync that learned the cap", n, len(reads))
				}
			}
		})
	}
}
