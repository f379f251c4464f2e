//go:build linux && benche2e

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// heapPeakEvery is how often heapPeak samples hnsproxy.
const heapPeakEvery = time.Second

// heapPeak follows hnsproxy's memory through a phase (a full sync, the HNS
// restart that drops objects and its recovery), for finding what sets its
// resident peak: every heapPeakEvery it logs VmRSS, VmHWM and the heap
// goal, and each time the goal is the highest yet it saves the heap
// profile, uncollected (its in-use figures are the heap live at the last
// collection, whose live set set that goal), as heap-<label>-peak.pprof.
// The returned func stops it and reports the peak goal seen.
func (o options) heapPeak(ctx context.Context, node *framework.Node, label string) func() error {
	if o.profileDir == "" {
		return func() error { return nil }
	}
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		start := time.Now()
		tick := time.NewTicker(heapPeakEvery)
		defer tick.Stop()
		var peak float64
		var peakAt time.Duration
		for {
			select {
			case <-stop:
				logf("%s: heap goal peaked at %.1f MiB, %.0fs in", label, peak, peakAt.Seconds())
				done <- nil
				return
			case <-tick.C:
			}
			goal, err := heapGoalMiB(node.Proxy.MetricsURL())
			if err != nil {
				continue // not serving yet
			}
			rss, hwm, err := framework.ProcessMemory(node.Proxy.PID())
			if err != nil {
				continue
			}
			at := time.Since(start)
			logf("%s +%.0fs: VmRSS %.1f MiB, VmHWM %.1f MiB, heap goal %.1f MiB", label, at.Seconds(), float64(rss)/1024, float64(hwm)/1024, goal)
			if goal <= peak {
				continue
			}
			peak, peakAt = goal, at
			path := filepath.Join(o.profileDir, fmt.Sprintf("heap-%s-peak.pprof", label))
			if err := saveProfile(ctx, node.Proxy.MetricsURL(), "heap", path); err != nil {
				done <- err
				<-stop
				return
			}
		}
	}()
	return func() error {
		close(stop)
		return <-done
	}
}
