//go:build linux && benche2e

package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/internal/nearestrank"
	"github.com/hnsproxy/hnsproxy/sim"
)

// The CPU phase prices each change in hnsproxy's own process CPU: what
// the real daemon spends, collections and all, on a node where the
// garbage it collects is its own (the in-process harness shares its heap
// with the simulator and the fake API server). Nothing asks hnsproxy
// anything while it runs (no /metrics scrape: serving one would be
// charged to a change); its runtime is read once before and once after.

// cpuMeter reads a process's CPU-time clock around changes.
type cpuMeter struct {
	read func() (time.Duration, error)
	now  func() time.Time
	wait func(time.Duration)
	// idle is the CPU the process uses per second of wall when nothing
	// changes (its timers, the runtime's background work).
	idle float64
}

const (
	// quietPoll is how long the process must use no more than its idle
	// CPU (and quietSlack) to count as done with a change.
	quietPoll  = 5 * time.Millisecond
	quietSlack = 30 * time.Microsecond
	quietLimit = time.Minute // a deadline for a busy process, not a target
	idleWindow = 2 * time.Second
)

func newCPUMeter(pid int) *cpuMeter {
	return &cpuMeter{
		read: func() (time.Duration, error) { return framework.ProcessCPU(pid) },
		now:  time.Now,
		wait: time.Sleep,
	}
}

// reading is the process's CPU clock at a moment.
type reading struct {
	cpu time.Duration
	at  time.Time
}

func (m *cpuMeter) take() (reading, error) {
	at := m.now()
	cpu, err := m.read()
	return reading{cpu: cpu, at: at}, err
}

// calibrate waits for the process to go quiet, then measures its idle CPU
// rate over idleWindow.
func (m *cpuMeter) calibrate() error {
	start, err := m.quiet()
	if err != nil {
		return err
	}
	m.wait(idleWindow)
	end, err := m.take()
	if err != nil {
		return err
	}
	m.idle = float64(end.cpu-start.cpu) / float64(end.at.Sub(start.at))
	return nil
}

// quiet waits until the process uses no more than its idle CPU over a
// quietPoll and returns the reading at that interval's start: the moment
// it finished what it was doing.
func (m *cpuMeter) quiet() (reading, error) {
	prev, err := m.take()
	if err != nil {
		return reading{}, err
	}
	for deadline := prev.at.Add(quietLimit); ; {
		m.wait(quietPoll)
		cur, err := m.take()
		if err != nil {
			return reading{}, err
		}
		if cur.cpu-prev.cpu <= m.idleIn(cur.at.Sub(prev.at))+quietSlack {
			return prev, nil
		}
		if cur.at.After(deadline) {
			return reading{}, fmt.Errorf("hnsproxy still busy after %v (%v of CPU in the last %v)", quietLimit, cur.cpu-prev.cpu, cur.at.Sub(prev.at))
		}
		prev = cur
	}
}

// idleIn is the CPU the process uses idle in d.
func (m *cpuMeter) idleIn(d time.Duration) time.Duration {
	return time.Duration(m.idle * float64(d))
}

// cost is what the process spent from start to end beyond idling.
func (m *cpuMeter) cost(start, end reading) time.Duration {
	return max(0, end.cpu-start.cpu-m.idleIn(end.at.Sub(start.at)))
}

// proxyFigures are hnsproxy's syncs and Go runtime counters, from its
// /metrics.
type proxyFigures struct {
	syncs, fullSyncs, collections, gcCPUSeconds, allocBytes, goalBytes, liveBytes float64
}

// fullSyncMetric counts full syncs: the periodic ones, in the phase.
const fullSyncMetric = "kubeproxy_sync_full_proxy_rules_duration_seconds"

// The sync histograms' counts, and the runtime/metrics names as
// client_golang's Go collector exports them (component-base registers it
// with every runtime metric).
var proxyMetrics = map[string]func(*proxyFigures) *float64{
	syncMetric:                           func(f *proxyFigures) *float64 { return &f.syncs },
	fullSyncMetric:                       func(f *proxyFigures) *float64 { return &f.fullSyncs },
	"go_gc_cycles_total_gc_cycles_total": func(f *proxyFigures) *float64 { return &f.collections },
	"go_cpu_classes_gc_total_cpu_seconds_total": func(f *proxyFigures) *float64 { return &f.gcCPUSeconds },
	"go_gc_heap_allocs_bytes_total":             func(f *proxyFigures) *float64 { return &f.allocBytes },
	"go_gc_heap_goal_bytes":                     func(f *proxyFigures) *float64 { return &f.goalBytes },
	"go_gc_heap_live_bytes":                     func(f *proxyFigures) *float64 { return &f.liveBytes },
}

func scrapeProxy(url string) (proxyFigures, error) {
	var f proxyFigures
	families, err := scrape(url)
	if err != nil {
		return f, err
	}
	for name, field := range proxyMetrics {
		fam, ok := families[name]
		if !ok || len(fam.GetMetric()) == 0 {
			return f, fmt.Errorf("%s: no %s", url, name)
		}
		m := fam.GetMetric()[0]
		*field(&f) = m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue() + float64(m.GetHistogram().GetSampleCount())
	}
	return f, nil
}

// cpuResult is the phase's outcome, for the report.
type cpuResult struct {
	perChange []time.Duration
	// stopped says why the phase ended before its changes, if it did.
	stopped       string
	idle          float64
	before, after proxyFigures
	// writes are the HNS writes hnsproxy made in the phase, and of them
	// load balancer updates, load balancer creates and deletes, and
	// endpoint creates and deletes (hnssim's counters: the bench only
	// reads); transport is the probe's CPU per call of each.
	writes, updates, lbWrites, endpointWrites int
	transport                                 probeCost
	priced                                    bool
}

// listings counts the listings HNS answered: a drift repair's start.
func listings(c sim.Counters) int {
	return c.CountResult(sim.OpListLoadBalancers, sim.ResultOK) + c.CountResult(sim.OpListEndpoints, sim.ResultOK)
}

// cpuPhase flips pods (each unready, then ready: two changes), skipping
// the first skip, and prices each change. A drift repair's listing would
// be charged to the changes beside it, so the phase stops when HNS sees a
// listing or hnsproxy's log shows one start or end (proxylog.go); it
// starts just after a repair (waitRepairEnded), a repair period before
// the next.
func (m *measure) cpuPhase(node *framework.Node, pods, skip int) (cpuResult, error) {
	var res cpuResult
	var err error
	if res.before, err = scrapeProxy(node.Proxy.MetricsURL()); err != nil {
		return res, err
	}
	hns0, err := node.Sim.Stats(m.ctx)
	if err != nil {
		return res, err
	}
	meter := newCPUMeter(node.Proxy.PID())
	if err := meter.calibrate(); err != nil {
		return res, err
	}
	res.idle = meter.idle
	// hns is hnssim's counters after the last change priced.
	hns, err := node.Sim.Stats(m.ctx)
	if err != nil {
		return res, err
	}
	if listings(hns) != listings(hns0) {
		return res, errors.New("a drift repair listed HNS while the CPU phase measured hnsproxy idle")
	}
	plog := &proxyLog{path: node.Proxy.LogPath()}
	if _, err := plog.read(); err != nil {
		return res, err
	}
changes:
	for k := range pods {
		n := pick(m.l, skip+k)
		m.used++
		for _, ready := range []bool{false, true} {
			log0, err := plog.read()
			if err != nil {
				return res, err
			}
			start, err := meter.take()
			if err != nil {
				return res, err
			}
			if _, err := change(m.ctx, m.admin, m.view, m.slices, m.l, m.vips, n, ready, applyWait); err != nil {
				return res, fmt.Errorf("CPU phase, pod %d ready=%v: %w", n, ready, err)
			}
			end, err := meter.quiet()
			if err != nil {
				return res, err
			}
			now, err := node.Sim.Stats(m.ctx)
			if err != nil {
				return res, err
			}
			log1, err := plog.read()
			if err != nil {
				return res, err
			}
			if log1.listingLines(log0) || listings(now) != listings(hns0) {
				res.stopped = fmt.Sprintf("a drift repair listed HNS after %d changes", len(res.perChange))
				if !ready {
					// Unpriced: the pod ready again, as the phases after
					// this one (and the node reboot's full sync) expect.
					if _, err := change(m.ctx, m.admin, m.view, m.slices, m.l, m.vips, n, true, applyWait); err != nil {
						return res, fmt.Errorf("CPU phase, pod %d ready again: %w", n, err)
					}
				}
				break changes
			}
			hns = now
			res.perChange = append(res.perChange, meter.cost(start, end))
		}
	}
	if res.after, err = scrapeProxy(node.Proxy.MetricsURL()); err != nil {
		return res, err
	}
	res.writes = hns.Writes() - hns0.Writes()
	made := func(op sim.Op) int { return hns.CountResult(op, sim.ResultOK) - hns0.CountResult(op, sim.ResultOK) }
	res.updates = made(sim.OpUpdateLoadBalancer)
	res.lbWrites = made(sim.OpCreateLoadBalancer) + made(sim.OpDeleteLoadBalancer)
	res.endpointWrites = made(sim.OpCreateEndpoint) + made(sim.OpDeleteEndpoint)
	if res.writes == res.updates+res.lbWrites+res.endpointWrites && res.writes > 0 {
		// What the client half of hnssim's transport costs each of them.
		res.transport, err = probeTransport(m.ctx, node.Sim.Socket, probeCalls, m.modifies)
		res.priced = err == nil
	}
	return res, err
}

// probeCalls are the updates the transport probe times.
const probeCalls = 2000

// fill puts the phase's figures in the report; a change rewrites
// slicesPerChange EndpointSlices.
func (res cpuResult) fill(r *report, slicesPerChange int) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	n := len(res.perChange)
	r.CPUChanges, r.CPUStopped = n, res.stopped
	r.CPUIdleMsPerSecond = res.idle * 1000
	if n == 0 {
		return
	}
	var sum time.Duration
	for _, d := range res.perChange {
		sum += d
		r.CPUPerChangeMs = append(r.CPUPerChangeMs, ms(d))
	}
	p99 := ms(nearestrank.Percentile(res.perChange, 99))
	r.CPUPerChangeP50Ms, r.CPUPerChangeP99Ms = ms(nearestrank.Percentile(res.perChange, 50)), p99
	r.CPUPerChangeMaxMs, r.CPUPerChangeMeanMs = ms(nearestrank.Percentile(res.perChange, 100)), ms(sum)/float64(n)
	r.CPUPerSliceP99Ms = p99 / float64(slicesPerChange)
	r.CPUHNSWritesPerChange = float64(res.writes) / float64(n)
	if res.priced {
		// Every write was priced: less the transport's client half, as
		// much as a change's writes cost on average.
		us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
		r.CPUTransportUsPerUpdate, r.CPUTransportUsPerLBWrite, r.CPUTransportUsPerEndpointWrite = us(res.transport.update), us(res.transport.lbWrite), us(res.transport.endpointWrite)
		transport := (float64(res.updates)*ms(res.transport.update) + float64(res.lbWrites)*ms(res.transport.lbWrite) +
			float64(res.endpointWrites)*ms(res.transport.endpointWrite)) / float64(n)
		r.CPUPerSliceP99LessTransportMs = max(0, p99-transport) / float64(slicesPerChange)
	}
	r.CPUPhaseSyncsPerChange = (res.after.syncs - res.before.syncs) / float64(n)
	r.CPUPhaseFullSyncs = res.after.fullSyncs - res.before.fullSyncs
	r.CPUPhaseCollections = res.after.collections - res.before.collections
	r.CPUPhaseCollectorCPUMs = (res.after.gcCPUSeconds - res.before.gcCPUSeconds) * 1000
	alloc := (res.after.allocBytes - res.before.allocBytes) / float64(n)
	r.CPUPhaseAllocKiBPerChange = alloc / 1024
	if alloc > 0 {
		r.CPUChangesPerCollection = max(0, res.after.goalBytes-res.after.liveBytes) / alloc
	}
}

func stoppedNote(stopped string) string {
	if stopped == "" {
		return ""
	}
	return "; stopped early: " + stopped
}
