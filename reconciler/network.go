package reconciler

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// The network hnsproxy programs can go behind its back, or be replaced by
// one of the same name with a new ID: a CNI that makes it again (on a
// changed configuration, or when HNS lost it), a node's provisioning that
// removes it on restart (Azure/azure-container-networking#4551). Its
// endpoints go with it, the remote endpoints hnsproxy made among them.
// kube-proxy's winkernel reads the network by name at every sync and, when
// it changed, deletes its policies and goes on with the new ID. hnsproxy
// read everything it knows of the network at start (its ID, type, subnets,
// source VIP, root endpoint, remote subnet routes), so it reports the change
// (NetworkChangedError) and the daemon exits: the kubelet, or the service
// control manager, starts it again, the start waits for the network
// (--hns-network-timeout) and adopts what HNS still holds.
//
// A read by name answers for sure once its looks agree (hcn says "not
// found" itself when no network has the name; hnslb.GetLooking) but
// costs a call whose answer grows with the cluster on overlay (a route
// per node), so it is not made at every Sync:
//   - each drift repair makes one before it lists, and so finds a change
//     within --drift-repair-period, or at once after an HNS restart;
//   - a Sync makes one when a call since the last suggested the network is
//     gone (networkSuspect): an endpoint create or a read of the network
//     answered "not found", or a pod's new endpoint, which a load balancer
//     needs as a backend, sits on another network. At most one such read
//     every networkCheckInterval.
//   - so that a node where nothing changes (the network deleted from a
//     runbook, Remove-HnsNetwork) does not wait for the drift repair, a
//     Sync reads one endpoint of hnsproxy's by ID every
//     networkProbeInterval (probe.go), a document of fixed size: the
//     network's endpoints go with it, so "not found" makes it suspect. An
//     endpoint deleted by itself costs one read by name that finds the
//     network in place.

// networkCheckInterval spaces the reads by name that suspicions ask for:
// the objects that fail meanwhile retry with their backoff anyway.
const networkCheckInterval = 5 * time.Second

// NetworkChangedError says the network hnsproxy programs is gone (NowID
// empty) or was replaced by another of the same name.
type NetworkChangedError struct {
	Name, WasID, NowID string
}

func (e *NetworkChangedError) Error() string {
	if e.NowID == "" {
		return fmt.Sprintf("HNS network %q (ID %s) is gone, and its endpoints with it", e.Name, e.WasID)
	}
	return fmt.Sprintf("HNS network %q was replaced: its ID was %s and is now %s; the endpoints on the old one went with it", e.Name, e.WasID, e.NowID)
}

// networkSuspect is set by calls whose answers suggest the network is
// gone; safe for concurrent use (creates run on the deadlines' goroutines).
type networkSuspect struct{ set atomic.Bool }

// noteCreate notes an endpoint create answered "not found" (the network
// is the only object a remote endpoint's document names), or a probe's
// read of an endpoint did (probe.go).
func (s *networkSuspect) noteCreate(err error) {
	if hnslb.IsNotFound(err) {
		s.set.Store(true)
	}
}

// GetNetworkByName reads a network by name with the call deadline.
func (d *deadlines) GetNetworkByName(ctx context.Context, name string) (*hnslb.Network, error) {
	return hnslb.GetLooking(func() (*hnslb.Network, error) {
		return guard(d, ctx, hnslb.OpGetNetworkByName, d.call, func(ctx context.Context) (*hnslb.Network, error) {
			return d.c.GetNetworkByName(ctx, name)
		})
	})
}

// checkNetwork reads the network by name and reports whether it is gone or
// replaced. Without a name (Options.NetworkName) it checks nothing; when HNS
// does not answer, it cannot tell and says nothing.
func (r *Reconciler) checkNetwork(ctx context.Context) *NetworkChangedError {
	if r.opts.NetworkName == "" {
		return nil
	}
	n, err := r.client.GetNetworkByName(ctx, r.opts.NetworkName)
	switch {
	case hnslb.IsNotFound(err):
		return &NetworkChangedError{Name: r.opts.NetworkName, WasID: r.opts.NetworkID}
	case err != nil:
		r.log.V(2).Info("Reading the HNS network by name failed; checked again later", "network", r.opts.NetworkName, "err", err)
		return nil
	case !strings.EqualFold(n.ID, r.opts.NetworkID):
		return &NetworkChangedError{Name: r.opts.NetworkName, WasID: r.opts.NetworkID, NowID: n.ID}
	}
	return nil
}

// checkSuspectedNetwork makes the read a suspicion asks for, once
// networkCheckInterval has passed since the last; callers hold r.mu.
func (r *Reconciler) checkSuspectedNetwork(run *syncRun) {
	if !r.client.suspect.set.Load() || run.now.Before(r.networkCheckAt) {
		return
	}
	r.client.suspect.set.Store(false)
	r.networkCheckAt = run.now.Add(networkCheckInterval)
	if changed := r.checkNetwork(run.ctx); changed != nil {
		run.res.NetworkChanged = changed
	}
}

// networkCheckDue is when a suspicion's read may be made (false: none waits).
func (r *Reconciler) networkCheckDue() (time.Time, bool) {
	if r.client == nil || !r.client.suspect.set.Load() || r.opts.NetworkName == "" {
		return time.Time{}, false
	}
	return r.networkCheckAt, true
}
