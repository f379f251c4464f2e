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

// repairWatch follows hnsproxy's drift repairs from outside: a repair's
// listing starts when hnssim counts a ListLoadBalancers (hnssim counts a
// call as it starts, then charges its per-object RPCs) and ends when
// hnsproxy's hnsproxy_hns_operation_duration_seconds counts a
// list_endpoints_of_network, the repair's second and last listing. Polled
// every repairPoll, so a boundary is known to about that.
type repairWatch struct {
	mu      sync.Mutex
	started int  // listings seen starting
	listing bool // one is under way
	err     error
	stop    chan struct{}
	done    chan struct{}
}

const (
	repairPoll        = 50 * time.Millisecond
	listEndpointsOp   = "list_endpoints_of_network"
	hnsDurationMetric = "hnsproxy_hns_operation_duration_seconds"
)

func watchRepairs(ctx context.Context, node *framework.Node) *repairWatch {
	w := &repairWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(repairPoll)
		defer tick.Stop()
		lists, ended := -1, -1.0
		for {
			l, e, err := repairCounts(ctx, node)
			w.mu.Lock()
			switch {
			case err != nil:
				w.err = err
			case lists >= 0:
				if l > lists {
					w.started += l - lists
					w.listing = true
				}
				if e > ended {
					w.listing = false
				}
			}
			w.mu.Unlock()
			if err == nil {
				lists, ended = l, e
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// repairCounts are hnssim's answered ListLoadBalancers calls and hnsproxy's
// completed list_endpoints_of_network calls.
func repairCounts(ctx context.Context, node *framework.Node) (lists int, ended float64, err error) {
	c, err := node.Sim.Stats(ctx)
	if err != nil {
		return 0, 0, err
	}
	// Only listings HNS answered: one refused (an HNS restart) ends there.
	lists = c.Calls[sim.OpListLoadBalancers][sim.ResultOK]
	families, err := scrape(node.Proxy.MetricsURL())
	if err != nil {
		return 0, 0, err
	}
	for _, m := range families[hnsDurationMetric].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "operation" && l.GetValue() == listEndpointsOp {
				ended += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return lists, ended, nil
}

// repairMark is what the watch knew at one moment.
type repairMark struct {
	started int
	listing bool
}

func (w *repairWatch) mark() repairMark {
	w.mu.Lock()
	defer w.mu.Unlock()
	return repairMark{started: w.started, listing: w.listing}
}

// overlapped reports whether a listing ran at some point between two marks.
func overlapped(before, after repairMark) bool {
	return before.listing || after.started > before.started
}

// close stops the watch and returns the last polling error, if any.
func (w *repairWatch) close() error {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// waitListing waits until a listing after mark m is under way.
func (w *repairWatch) waitListing(ctx context.Context, m repairMark, timeout time.Duration) error {
	return framework.Poll(ctx, timeout, repairPoll, func(context.Context) error {
		now := w.mark()
		if now.started > m.started && now.listing {
			return nil
		}
		return fmt.Errorf("no drift repair listing yet (%d seen)", now.started)
	})
}
