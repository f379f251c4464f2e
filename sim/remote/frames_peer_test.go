package remote_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// A call whose caller gives up while its first hcn RPC is still under way
// (its latency) never reaches HNS, over the socket as in-process: the
// caller's deadline ends the call on the server too, which neither applies
// nor counts it.
func TestACallAbandonedBeforeItReachesHNSIsNotApplied(t *testing.T) {
	h, c, _ := serveSim(t, remote.Extras{})
	h.SetLatency(300 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.CreateNetwork(ctx, l2bridge("cbr0")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a create past its deadline: %v, want context.DeadlineExceeded", err)
	}
	time.Sleep(600 * time.Millisecond) // past the latency a server that went on would wait out
	if nets := h.Snapshot().Networks; len(nets) != 0 {
		t.Errorf("networks after the abandoned create: %d, want none", len(nets))
	}
	if n := h.Counters().Total(); n != 0 {
		t.Errorf("calls counted: %d, want none", n)
	}
}
