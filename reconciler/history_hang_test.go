package reconciler

import (
	"context"
	"time"

	"github.com/hnsproxy/hnsproxy/sim"
)

// Hangs and power loss in the random histories (history_test.go).
//
// A hang holds HNS calls of one operation, or of all, for a few steps:
// before HNS applied them (a wedged HNS) or after (the write done, the
// reply never sent). Every call HNS holds runs into hnsproxy's deadline,
// which the fake clock passes, so hnsproxy abandons it and goes on; a
// kill may wait for a held call, so hnsproxy dies while one hangs. The
// hang lifts when its steps are over, and before the CNI or another agent
// acts: the held calls then go on (a held create lands late, maybe after a
// restart of hnsproxy), and the history waits for each to return. An HNS restart or a reboot ends the calls it holds: those held
// before fail, as RPCs into a service that went away, and those held after
// were applied before the restart.
//
// A power loss kills hnsproxy, cuts its journal back to what an fsync made
// durable (killFS.powerLoss), and reboots HNS, which may keep its objects
// or lose any set of them (docs/reliability.md does not know whether HNS
// keeps load balancers across a power loss); the CNI wires the pods again.

// historyHungOps are the operations a hang may hold besides sim.AnyOp:
// each of the calls hnsproxy makes.
var historyHungOps = []sim.Op{
	sim.OpCreateLoadBalancer, sim.OpUpdateLoadBalancer, sim.OpDeleteLoadBalancer, sim.OpGetLoadBalancer,
	sim.OpListLoadBalancers, sim.OpCreateEndpoint, sim.OpDeleteEndpoint, sim.OpGetEndpoint, sim.OpListEndpoints,
	sim.OpGetNetwork,
}

// hang holds one operation, or all, before or after HNS applies them, for
// one to six steps; on a third of them hnsproxy dies at the first call
// held.
func (h *history) hang() {
	h.endHang() // a new hang set beside calls held would release them at any time
	op := sim.AnyOp
	if h.rng.IntN(3) > 0 {
		op = historyHungOps[h.rng.IntN(len(historyHungOps))]
	}
	h.faults.Hang, h.faults.HangReply = nil, nil
	if h.rng.IntN(2) == 0 {
		h.faults.Hang = []sim.Op{op}
	} else {
		h.faults.HangReply = []sim.Op{op}
	}
	h.hangSteps = 1 + h.rng.IntN(6)
	h.killAtHeld = h.rng.IntN(3) == 0
	h.e.hns.SetFaults(h.faults)
	h.note("hang %v, reply %v, for %d steps, kill at the first held call %v", h.faults.Hang, h.faults.HangReply, h.hangSteps, h.killAtHeld)
}

func (h *history) hung() bool { return len(h.faults.Hang)+len(h.faults.HangReply) > 0 }

// endHang lifts the hang and waits for every held call to return. They
// go on without faults (as concurrent calls they would draw from HNS's
// fault generator in any order, and a seed's history must repeat).
func (h *history) endHang() {
	if !h.hung() {
		return
	}
	h.faults.Hang, h.faults.HangReply = nil, nil
	h.hangSteps, h.killAtHeld = 0, false
	h.e.hns.SetFaults(sim.Faults{})
	h.waitReturns()
	h.e.hns.SetFaults(h.faults)
	h.note("hang lifted")
}

// tickHang counts a step of the hang down, and lifts it after its last.
func (h *history) tickHang() {
	if h.hangSteps > 0 {
		if h.hangSteps--; h.hangSteps == 0 {
			h.endHang()
		}
	}
}

// watchReturns makes r's abandoned calls report their returns to
// waitReturns.
func (h *history) watchReturns(r *Reconciler) {
	if h.returns == nil {
		h.returns = make(chan struct{}, 1)
	}
	r.client.onReturn = func() {
		select {
		case h.returns <- struct{}{}:
		default: // one waits already: waitReturns looks at every process again
		}
	}
	h.processes = append(h.processes, r.client)
}

// waitReturns blocks until no process of the history, the killed ones
// included, has an abandoned call running.
func (h *history) waitReturns() {
	for _, d := range h.processes {
		for d.hanging() {
			<-h.returns
		}
	}
}

// call runs fn, which calls into hnsproxy, while HNS may hold its calls:
// each time HNS holds one more, hnsproxy dies first if a kill waits for a
// held call, and the clock passes the longest deadline (a listing's), so
// hnsproxy abandons the call and goes on. fn's calls run one after
// another, so each held call is one more.
func (h *history) call(fn func()) {
	if !h.hung() {
		fn()
		return
	}
	held := h.e.hns.Held() // before fn runs, so its first held call counts
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	for {
		waitCtx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-done:
				cancel()
			case <-waitCtx.Done():
			}
		}()
		err := h.e.hns.WaitHeld(waitCtx, held+1)
		cancel()
		if err != nil {
			return // fn returned
		}
		held++
		if h.killAtHeld {
			h.killAtHeld = false
			h.kill.die()
			h.note("killed while HNS holds a call")
		}
		h.e.clock.Step(DefaultListTimeout)
	}
}

// restartHNS restarts HNS, dropping loss; the calls it holds end with it.
func (h *history) restartHNS(loss sim.RestartLoss) {
	window := time.Duration(0)
	if h.hung() {
		window = time.Minute
	}
	if err := h.e.hns.RestartLosing(window, loss); err != nil {
		h.e.t.Fatal(err)
	}
	h.endHang() // those held before fail in the restart window
	h.e.hns.Restart(0)
	if loss == sim.RestartLosesEndpoints {
		h.rewirePods()
	}
	h.plantForeign()
}

// powerLoss kills hnsproxy with its unsynced journal appends, and reboots
// HNS, which keeps or loses any set of objects.
func (h *history) powerLoss() {
	loss := sim.RestartLosses[h.rng.IntN(len(sim.RestartLosses))]
	h.note("power loss; HNS comes back losing %q", loss)
	h.kill.die()
	h.r.store.fs.(*killFS).powerLoss(h.e.t, journalPath(h.e.stateFile))
	h.restartHNS(loss)
}
