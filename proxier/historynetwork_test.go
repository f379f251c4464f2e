package proxier

import (
	"context"
	"errors"
)

// Network replacement in the proxier's random histories (history_test.go):
// the CNI deletes this node's HNS network, with the endpoints on it, and
// makes one of the same name again, with a new ID, as Flannel does when it
// starts again and hnscni when its configuration changed; on overlay
// Flannel adds its routes again. hnsproxy, which checks its network by
// name, ends Run with HNSNetworkChanged, and a new process starts on the
// new network (as the DaemonSet's pod or the Windows service restarts).
// The pods the CNI had wired are wired again on the new network, before
// or after that start.
func (h *proxierHistory) replaceNetwork() {
	ctx := context.Background()
	wasID := h.n.networkID
	var nowID string
	h.quietly(func() {
		old, err := h.n.hns.GetNetworkByID(ctx, wasID)
		if err != nil {
			h.t.Fatal(err)
		}
		if nowID, err = h.n.hns.ReplaceNetwork(ctx, wasID, true); err != nil {
			h.t.Fatal(err)
		}
		if err := h.n.hns.SetNetworkPolicies(nowID, old.Policies); err != nil {
			h.t.Fatal(err)
		}
	})
	podsFirst := h.rng.IntN(2) == 0
	h.note("network replaced; pods wired again before hnsproxy starts: %t", podsFirst)
	h.n.wantEndedForNetwork(h.repairUntilRunEnds(), nowID)
	h.n.networkID = nowID
	if podsFirst {
		h.wireAgain()
	}
	h.n.start()
	if !podsFirst {
		h.wireAgain()
	}
}

// wireAgain has the CNI wire every pod it had wired, on the node's network.
func (h *proxierHistory) wireAgain() {
	h.quietly(func() {
		for _, ip := range h.wiredPods() {
			h.n.wirePod(ip)
		}
	})
}

// repairUntilRunEnds asks for drift repairs until Run ends, and returns
// its error.
func (h *proxierHistory) repairUntilRunEnds() error {
	n := h.n
	var err error
	n.repairUntil("Run ended for the replaced network", func() bool {
		select {
		case err = <-n.done:
			n.cancel()
			n.cancel = nil
			return true
		default:
			return false
		}
	})
	if err == nil {
		err = errors.New("Run ended without an error")
	}
	return err
}

// repairUntil asks for drift repairs until done holds. One asked for while
// hnsproxy starts, or while a listing runs, would be dropped (the start
// counts as a repair, and repairs run one at a time), so it asks again.
func (n *testNode) repairUntil(what string, done func() bool) {
	n.t.Helper()
	n.eventually(what, func() bool {
		if done() {
			return true
		}
		n.proxier.mu.Lock()
		idle := n.proxier.initialized && !n.proxier.repairing
		n.proxier.mu.Unlock()
		if idle {
			n.repairNow()
		}
		return false
	})
}
