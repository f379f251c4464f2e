package sourcevip

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ipamCallTimeout bounds one IPAM plugin call. The plugin runs at start,
// before the sync loop, while /livez answers 200: one that never answers
// (host-local blocked on its store's lock, a plugin waiting on its
// datastore) would hold the start for ever, with no probe to restart it
// and no log to say why. A runtime's call has a bound too: the kubelet
// gives a pod's whole sandbox, its CNI ADD included, twice
// --runtime-request-timeout (four minutes); one IPAM call gets half.
// A variable for the tests.
var ipamCallTimeout = 2 * time.Minute

// errIPAMHung marks an IPAM call killed at ipamCallTimeout: it says
// nothing of what the IPAM holds, so Reserve neither takes the
// reservation for lost nor goes on to other calls, which would hang too,
// and the start fails.
var errIPAMHung = errors.New("did not answer within")

// withDeadline runs call with ipamCallTimeout. A call the deadline cut
// short (the plugin killed) is errIPAMHung, naming the plugin and the
// command; one ctx cut short is ctx's, as before.
func withDeadline(ctx context.Context, plugin, command string, call func(context.Context) error) error {
	callCtx, cancel := context.WithTimeout(ctx, ipamCallTimeout)
	defer cancel()
	err := call(callCtx)
	if err != nil && ctx.Err() == nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("IPAM %s %s %w %s and was killed: %w", plugin, command, errIPAMHung, ipamCallTimeout, err)
	}
	return err
}
