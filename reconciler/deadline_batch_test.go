package reconciler

import (
	"context"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/hnsproxy/hnsproxy/sim"
)

// A batch's call that returns just as its deadline passes, after the
// caller gave up on it and before the caller recorded it as abandoned,
// must leave its object free, and HNS's count of running calls as it was.
// The return released the object before the abandonment was recorded: on
// the first abandoned call of the process a write to a nil map (a panic
// in the batch's goroutine), else the object busy for good, every later
// call on it "not called".
func TestBatchCallReturningAtItsDeadlineLeavesItsObjectFree(t *testing.T) {
	for _, tc := range []struct {
		name          string
		abandonedOnce bool // an earlier call was abandoned and returned
	}{
		{name: "first abandoned call"},
		{name: "after an earlier one", abandonedOnce: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2025)
			o := e.options()
			started, release := make(chan struct{}), make(chan struct{})
			returned := make(chan struct{}, 1)
			// The caller has given up on the call: let it return, and
			// wait until its return is recorded, before the caller goes on.
			o.CallTimedOut = func(string) {
				close(release)
				<-returned
			}
			d := newDeadlines(e.hns, o, ktesting.NewLogger(t, ktesting.DefaultConfig))
			d.onReturn = func() { returned <- struct{}{} }
			if tc.abandonedOnce {
				d.ended(true, []string{"ep earlier"})
				d.returned([]string{"ep earlier"})
				<-returned
				d.takeReturned()
			}
			calls := []func(context.Context) (int, error){
				func(context.Context) (int, error) { close(started); <-release; return 1, nil },
				func(context.Context) (int, error) { return 2, nil },
			}
			done := make(chan []error, 1)
			go func() {
				_, errs := guardBatch(d, ctx, func(int) string { return "create_test" }, calls, []string{"ep a", "ep b"})
				done <- errs
			}()
			<-started
			e.clock.Step(DefaultCallTimeout)
			errs := <-done
			if errs[0] == nil || errs[1] == nil {
				t.Fatalf("errors %v; want the call given up on and the next not made", errs)
			}
			if d.busy("ep a") {
				t.Error("the call returned, but its object stays busy for good")
			}
			d.mu.Lock()
			total := d.total
			d.mu.Unlock()
			if total != 0 {
				t.Errorf("%d calls counted running after every call returned, want 0", total)
			}
		})
	}
}
