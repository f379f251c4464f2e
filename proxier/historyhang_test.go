package proxier

import (
	"slices"
	"time"

	"github.com/hnsproxy/hnsproxy/sim"
)

// Hangs in the proxier's random histories (history_test.go), as the
// reconciler's histories draw them (reconciler/history_hang_test.go): HNS
// holds the calls of one operation, or of all, before it applies them (a
// wedged HNS) or after (the write done, the reply never sent), for one to
// four steps. hnsproxy abandons each held call at its deadline, which is
// short here as the harness runs on the real clock, and goes on; an
// hnsproxy restart drawn meanwhile stops it while a call may be held. The
// hang lifts when its steps are over, before the CNI or Flannel acts, and
// before the history converges; the held calls then go on, a held create
// landing late, maybe in a process that started since.

// The history node's deadlines: a held call is abandoned in tens of
// milliseconds, and a healthy one is far quicker, also under -race.
const (
	phCallTimeout = 50 * time.Millisecond
	phListTimeout = 100 * time.Millisecond
)

// phHungOps are the operations a hang may hold besides sim.AnyOp: each of
// the calls hnsproxy makes.
var phHungOps = []sim.Op{
	sim.OpCreateLoadBalancer, sim.OpUpdateLoadBalancer, sim.OpDeleteLoadBalancer, sim.OpGetLoadBalancer,
	sim.OpListLoadBalancers, sim.OpCreateEndpoint, sim.OpDeleteEndpoint, sim.OpGetEndpoint, sim.OpListEndpoints,
	sim.OpGetNetwork,
}

// hang holds one operation, or all, before or after HNS applies them, for
// one to four steps.
func (h *proxierHistory) hang() {
	h.endHang() // a new hang beside calls held would release them at any time
	op := sim.AnyOp
	if h.rng.IntN(3) > 0 {
		op = phHungOps[h.rng.IntN(len(phHungOps))]
	}
	if h.rng.IntN(2) == 0 {
		h.faults.Hang = []sim.Op{op}
	} else {
		h.faults.HangReply = []sim.Op{op}
	}
	h.hangSteps = 1 + h.rng.IntN(4)
	h.n.hns.SetFaults(h.faults)
	h.note("hang %v, reply %v, for %d steps", h.faults.Hang, h.faults.HangReply, h.hangSteps)
}

func (h *proxierHistory) hung() bool { return len(h.faults.Hang)+len(h.faults.HangReply) > 0 }

// endHang lifts the hang and waits until HNS holds no call.
func (h *proxierHistory) endHang() {
	if !h.hung() {
		return
	}
	h.faults.Hang, h.faults.HangReply = nil, nil
	h.hangSteps = 0
	h.n.hns.SetFaults(h.faults)
	h.n.eventually("the held calls released", func() bool { return h.n.hns.Held() == 0 })
	h.note("hang lifted")
}

// tickHang counts a step of the hang down, and lifts it after its last.
func (h *proxierHistory) tickHang() {
	if h.hangSteps > 0 {
		if h.hangSteps--; h.hangSteps == 0 {
			h.endHang()
		}
	}
}

// restartEndingHeldCalls restarts HNS, dropping loss. The calls it holds
// end with it: those held before it applied them meet the restart's window
// and fail, as RPCs into a service that went away (unless one reaches HNS
// after the window closed, as a call arriving just after a restart does);
// those held after were applied before the restart.
func (h *proxierHistory) restartEndingHeldCalls(loss sim.RestartLoss) {
	window := time.Duration(0)
	if h.hung() {
		window = time.Hour // closed below, once the held calls are released
	}
	if err := h.n.hns.RestartLosing(window, loss); err != nil {
		h.t.Fatal(err)
	}
	h.endHang()
	h.n.hns.Restart(0)
}

// restartAtHeld, on a third of the hangs that hold a listing, restarts
// hnsproxy once HNS holds one of its calls: a drift repair (or the start
// under way) lists HNS, so one is held. The late reply then lands beside
// the next process.
func (h *proxierHistory) restartAtHeld() {
	ops := slices.Concat(h.faults.Hang, h.faults.HangReply)
	if len(ops) != 1 || !slices.Contains([]sim.Op{sim.AnyOp, sim.OpListLoadBalancers, sim.OpListEndpoints}, ops[0]) ||
		h.rng.IntN(3) != 0 {
		return
	}
	h.n.repairUntil("a call held", func() bool { return h.n.hns.Held() > 0 })
	h.note("hnsproxy restarted; HNS holds %d calls", h.n.hns.Held())
	h.restartProxy()
}
