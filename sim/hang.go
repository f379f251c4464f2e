package sim

import (
	"context"
	"slices"
)

// A hang holds calls the way a wedged HNS service does: hcn calls are
// synchronous RPCs that cannot be cancelled, so a held call ignores its
// context. Faults.Hang holds calls before they reach HNS's state;
// Faults.HangReply lets HNS apply them and holds the reply (a write that
// happened although its caller never heard). SetFaults without the
// operation releases them: a call held before goes on as if it had just
// arrived, a held reply is returned.

// hangs is the hang state of an HNS; guarded by HNS.mu.
type hangs struct {
	before, reply []Op
	// release is closed (and replaced) whenever SetFaults runs, so held
	// calls look again at what is hung.
	release chan struct{}
	held    int
	// heldChanged is closed (and replaced) whenever held changes.
	heldChanged chan struct{}
}

func newHangs() hangs {
	return hangs{release: make(chan struct{}), heldChanged: make(chan struct{})}
}

// set replaces the hung operations and wakes every held call, unless they
// are the same: held calls then stay held without waking, so Held never
// dips while a test sets other faults beside an unchanged hang.
func (s *hangs) set(before, reply []Op) {
	if slices.Equal(s.before, before) && slices.Equal(s.reply, reply) {
		return
	}
	s.before, s.reply = slices.Clone(before), slices.Clone(reply)
	close(s.release)
	s.release = make(chan struct{})
}

func hangsOp(ops []Op, op Op) bool {
	return slices.Contains(ops, op) || slices.Contains(ops, AnyOp)
}

func (s *hangs) notify() {
	close(s.heldChanged)
	s.heldChanged = make(chan struct{})
}

// hold blocks while op hangs at this point (reply: after HNS applied it).
// Called without h.mu.
func (h *HNS) hold(op Op, reply bool) {
	if !h.hanging.Load() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		ops := h.hangs.before
		if reply {
			ops = h.hangs.reply
		}
		if !hangsOp(ops, op) {
			return
		}
		release := h.hangs.release
		h.hangs.held++
		h.hangs.notify()
		h.mu.Unlock()
		<-release
		h.mu.Lock()
		h.hangs.held--
		h.hangs.notify()
	}
}

// Held is how many calls a hang holds now.
func (h *HNS) Held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hangs.held
}

// WaitHeld blocks until a hang holds at least n calls, or ctx ends. Tests
// use it to act while a call is known to be hung.
func (h *HNS) WaitHeld(ctx context.Context, n int) error {
	for {
		h.mu.Lock()
		held, changed := h.hangs.held, h.hangs.heldChanged
		h.mu.Unlock()
		if held >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
