package sim

import (
	"maps"
	"slices"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// AnyOp in Faults.ErrorRate applies to every operation without its own rate.
const AnyOp Op = "*"

// Faults are errors injected into calls of the code under test.
type Faults struct {
	// ErrorRate is the probability (0..1) that a call of an operation fails.
	ErrorRate map[Op]float64
	// Errors are the codes a failing call draws from; empty means
	// RPCServerUnavailable (HNS unreachable).
	Errors []hnslb.ErrorCode
	// Committed is the probability (0..1) that an injected failure of a
	// write happened after HNS applied it: the caller sees the error, the
	// object was created, changed or deleted all the same (a timeout on the
	// way back). Zero, the default, means failed calls change nothing.
	Committed float64
	// Hang holds every call of these operations (AnyOp: all) before it
	// reaches HNS's state, and HangReply after HNS applied it, until
	// SetFaults lifts the hang; see hang.go.
	Hang, HangReply []Op
}

// SetFaults replaces the injected faults. Draws come from a generator seeded
// by Options.Seed, so the same calls in the same order fail the same way.
func (h *HNS) SetFaults(f Faults) {
	f.ErrorRate = maps.Clone(f.ErrorRate)
	f.Errors = slices.Clone(f.Errors)
	h.mu.Lock()
	h.faults = f
	h.hangs.set(f.Hang, f.HangReply)
	h.hanging.Store(len(f.Hang)+len(f.HangReply) > 0)
	h.mu.Unlock()
}

// Restart simulates an HNS service restart: objects are kept, but every call
// fails with RPCServerUnavailable (IsUnavailable, never IsNotFound) for d.
// Restart(0) ends a restart window early.
func (h *HNS) Restart(d time.Duration) {
	h.mu.Lock()
	h.down = h.clock.Now().Add(d)
	h.mu.Unlock()
}

// gate decides, before a call touches state, whether it fails and, for an
// injected failure of a write, whether the write still happens. Called with
// h.mu held.
func (h *HNS) gate(op Op) (commit bool, err error) {
	if h.clock.Now().Before(h.down) {
		return false, hnsError(op, hnslb.CodeRPCServerUnavailable, "(HNS is restarting)")
	}
	rate, ok := h.faults.ErrorRate[op]
	if !ok {
		rate = h.faults.ErrorRate[AnyOp]
	}
	if rate <= 0 || h.faultRng.Float64() >= rate {
		return false, nil
	}
	code := hnslb.CodeRPCServerUnavailable
	if n := len(h.faults.Errors); n > 0 {
		code = h.faults.Errors[h.faultRng.IntN(n)]
	}
	commit = op.isWrite() && h.faults.Committed > 0 && h.faultRng.Float64() < h.faults.Committed
	return commit, hnsError(op, code, "(injected fault)")
}
