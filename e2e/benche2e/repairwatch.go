//go:build linux && benche2e

package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/sim"
)

// repairWatch follows hnsproxy's drift repairs from outside. A repair
// lists load balancers, then the network's endpoints, without hnsproxy's
// sync lock; then it judges what it listed under the reconciler's lock, and
// asks for a sync. hnssim counts each answered ListLoadBalancers as it
// starts (its per-object RPCs are charged after), hnsproxy's
// hnsproxy_hns_operation_duration_seconds counts each
// list_endpoints_of_network as it ends, and its
// kubeproxy_sync_proxy_rules_duration_seconds each sync as it ends. So a
// repair runs from hnssim's count going up to hnsproxy's, and then until
// the next sync ends: a sync cannot end while the judging holds the lock.
// Polled every repairPoll, so a boundary is known to about that.
type repairWatch struct {
	mu        sync.Mutex
	started   int       // repairs seen starting
	repairing bool      // one is under way
	ended     time.Time // when the last one was seen ending
	err       error
	stop      chan struct{}
	done      chan struct{}
}

const (
	repairPoll        = 50 * time.Millisecond
	listEndpointsOp   = "list_endpoints_of_network"
	hnsDurationMetric = "hnsproxy_hns_operation_duration_seconds"
	syncMetric        = "kubeproxy_sync_proxy_rules_duration_seconds"
)

func watchRepairs(ctx context.Context, node *framework.Node) *repairWatch {
	w := &repairWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(repairPoll)
		defer tick.Stop()
		var prev repairCount
		first, listing := true, false
		judgeUntil := -1.0 // a listing ended when syncs stood here: repairing until one more ends
		for {
			c, err := repairCounts(ctx, node)
			w.mu.Lock()
			switch {
			case err != nil:
				w.err = err
			case first:
				first = false
			default:
				if c.started > prev.started {
					w.started += c.started - prev.started
					listing = true
				}
				if c.listed > prev.listed {
					if !listing { // one under way when the watch began
						w.started++
					}
					listing, judgeUntil = false, c.syncs
				}
				if judgeUntil >= 0 && c.syncs > judgeUntil {
					judgeUntil = -1
				}
				was := w.repairing
				w.repairing = listing || judgeUntil >= 0
				if was && !w.repairing {
					w.ended = time.Now()
				}
			}
			if err == nil {
				prev = c
			}
			w.mu.Unlock()
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// repairCount is one poll: listings started (hnssim) and finished
// (hnsproxy), and syncs ended.
type repairCount struct {
	started, listed int
	syncs           float64
}

// repairCounts polls hnssim and hnsproxy once.
func repairCounts(ctx context.Context, node *framework.Node) (repairCount, error) {
	c, err := node.Sim.Stats(ctx)
	if err != nil {
		return repairCount{}, err
	}
	// Only listings HNS answered: one refused (an HNS restart) ends there.
	out := repairCount{started: c.Calls[sim.OpListLoadBalancers][sim.ResultOK]}
	families, err := scrape(node.Proxy.MetricsURL())
	if err != nil {
		return repairCount{}, err
	}
	for _, m := range families[hnsDurationMetric].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "operation" && l.GetValue() == listEndpointsOp {
				out.listed += int(m.GetHistogram().GetSampleCount())
			}
		}
	}
	for _, m := range families[syncMetric].GetMetric() {
		out.syncs += float64(m.GetHistogram().GetSampleCount())
	}
	return out, nil
}

// repairMark is what the watch knew at one moment.
type repairMark struct {
	started   int
	repairing bool
}

func (w *repairWatch) mark() repairMark {
	w.mu.Lock()
	defer w.mu.Unlock()
	return repairMark{started: w.started, repairing: w.repairing}
}

// overlapped reports whether a repair ran at some point between two marks.
func overlapped(before, after repairMark) bool {
	return before.repairing || after.started > before.started
}

// close stops the watch and returns the last polling error, if any.
func (w *repairWatch) close() error {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// waitRepairEnded waits until no repair runs and the last one ended
// within fresh: the next is then nearly a repair period away.
func (w *repairWatch) waitRepairEnded(ctx context.Context, fresh, timeout time.Duration) error {
	return framework.Poll(ctx, timeout, repairPoll, func(context.Context) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.repairing && !w.ended.IsZero() && time.Since(w.ended) <= fresh {
			return nil
		}
		return fmt.Errorf("no drift repair has just ended (%d seen, one under way: %v)", w.started, w.repairing)
	})
}

// waitRepair waits until a repair after mark m is under way.
func (w *repairWatch) waitRepair(ctx context.Context, m repairMark, timeout time.Duration) error {
	return framework.Poll(ctx, timeout, repairPoll, func(context.Context) error {
		now := w.mark()
		if now.started > m.started && now.repairing {
			return nil
		}
		return fmt.Errorf("no drift repair yet (%d seen)", now.started)
	})
}
