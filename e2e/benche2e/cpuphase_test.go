//go:build linux && benche2e

package main

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fakeProcess is a process busy (a full core) from busyFrom to busyTo and
// idle at idleRate otherwise, on a clock the meter's waits advance.
type fakeProcess struct {
	start            time.Time
	elapsed          time.Duration
	busyFrom, busyTo time.Duration
	idleRate         float64
}

func (p *fakeProcess) meter() *cpuMeter {
	return &cpuMeter{
		read: func() (time.Duration, error) { return p.cpu(), nil },
		now:  func() time.Time { return p.start.Add(p.elapsed) },
		wait: func(d time.Duration) { p.elapsed += d },
	}
}

func (p *fakeProcess) cpu() time.Duration {
	busy := max(0, min(p.elapsed, p.busyTo)-p.busyFrom)
	return busy + time.Duration(p.idleRate*float64(p.elapsed-busy))
}

func TestCPUMeterPricesAChangeToWhereTheProcessWentQuiet(t *testing.T) {
	p := &fakeProcess{start: time.Unix(1000, 0), idleRate: 0.001}
	m := p.meter()
	if err := m.calibrate(); err != nil {
		t.Fatal(err)
	}
	if math.Abs(m.idle-0.001) > 1e-6 {
		t.Fatalf("idle rate %v; want 0.001", m.idle)
	}
	// A change: 22 ms of work from now.
	start, _ := m.take()
	p.busyFrom, p.busyTo = p.elapsed, p.elapsed+22*time.Millisecond
	end, err := m.quiet()
	if err != nil {
		t.Fatal(err)
	}
	if got := end.at.Sub(start.at); got < 22*time.Millisecond || got > 22*time.Millisecond+quietPoll {
		t.Errorf("quiet from %v after the change began; want within a poll after its 22 ms", got)
	}
	if got := m.cost(start, end); got < 21*time.Millisecond || got > 22*time.Millisecond+quietPoll {
		t.Errorf("cost %v; want the change's 22 ms, give or take a poll", got)
	}
	// Idle alone costs nothing.
	a, _ := m.take()
	m.wait(time.Second)
	b, _ := m.take()
	if got := m.cost(a, b); got > time.Microsecond {
		t.Errorf("a second of idling costs %v; want 0", got)
	}
}

func TestCPUMeterGivesUpOnAProcessThatNeverGoesQuiet(t *testing.T) {
	p := &fakeProcess{start: time.Unix(1000, 0), busyTo: time.Hour}
	if _, err := p.meter().quiet(); err == nil || !strings.Contains(err.Error(), "still busy") {
		t.Fatalf("quiet on a busy process: %v; want a still-busy error", err)
	}
	broken := &cpuMeter{read: func() (time.Duration, error) { return 0, errors.New("gone") }, now: time.Now, wait: func(time.Duration) {}}
	if _, err := broken.quiet(); err == nil {
		t.Fatal("quiet with an unreadable clock: no error")
	}
}

func TestCPUResultFillsTheReport(t *testing.T) {
	res := cpuResult{
		idle:   0.002,
		before: proxyFigures{syncs: 40, fullSyncs: 3, collections: 7, gcCPUSeconds: 1, allocBytes: 1 << 30, goalBytes: 300 << 20, liveBytes: 150 << 20},
		after:  proxyFigures{syncs: 340, fullSyncs: 5, collections: 8, gcCPUSeconds: 1.25, allocBytes: 1<<30 + 100*(150<<10), goalBytes: 300 << 20, liveBytes: 150 << 20},
	}
	var series []float64
	for i := 1; i <= 100; i++ {
		res.perChange = append(res.perChange, time.Duration(i)*time.Millisecond)
		series = append(series, float64(i))
	}
	res.writes, res.updates, res.endpointWrites = 1100, 1000, 100
	res.transport = probeCost{update: 100 * time.Microsecond, lbWrite: 50 * time.Microsecond, endpointWrite: 200 * time.Microsecond}
	res.priced = true
	var r report
	res.fill(&r, 10)
	want := report{CPUChanges: 100, CPUIdleMsPerSecond: 2, CPUPerChangeP50Ms: 50, CPUPerChangeP99Ms: 99, CPUPerChangeMaxMs: 100,
		CPUPerChangeMeanMs: 50.5, CPUPerSliceP99Ms: 9.9, CPUPerChangeMs: series, CPUHNSWritesPerChange: 11, CPUTransportUsPerUpdate: 100, CPUTransportUsPerLBWrite: 50, CPUTransportUsPerEndpointWrite: 200,
		CPUPerSliceP99LessTransportMs: 9.78, // (99 ms - 10 updates of 0.1 ms - 1 endpoint write of 0.2) / 10 slices
		CPUPhaseSyncsPerChange:        3, CPUPhaseFullSyncs: 2, CPUPhaseCollections: 1, CPUPhaseCollectorCPUMs: 250,
		CPUPhaseAllocKiBPerChange: 150, CPUChangesPerCollection: 1024}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("report\n got %+v\nwant %+v", r, want)
	}
	// Where HNS cannot modify: each update a delete and a create.
	replaced := res
	replaced.writes, replaced.updates, replaced.lbWrites = 2100, 0, 2000
	replaced.transport.update = 0
	var r2 report
	replaced.fill(&r2, 10)
	if r2.CPUHNSWritesPerChange != 21 || math.Abs(r2.CPUPerSliceP99LessTransportMs-9.78) > 1e-9 {
		t.Errorf("replacements: %+v; want 21 writes a change and 9.78 ms a slice less 20 load balancer writes of 0.05 ms and one endpoint write", r2)
	}
	// Writes the probe does not price (no probe ran): no figure less the transport.
	res.writes, res.transport, res.priced = 1200, probeCost{}, false
	var mixed report
	res.fill(&mixed, 10)
	if mixed.CPUHNSWritesPerChange != 12 || mixed.CPUPerSliceP99LessTransportMs != 0 || mixed.CPUTransportUsPerUpdate != 0 {
		t.Errorf("mixed writes: %+v; want 12 writes a change and no transport figures", mixed)
	}
	var none report
	cpuResult{stopped: "a drift repair listed HNS after 0 changes"}.fill(&none, 10)
	if none.CPUChanges != 0 || none.CPUStopped == "" || none.CPUPerChangeP99Ms != 0 {
		t.Errorf("no changes: %+v; want zero figures and why it stopped", none)
	}
}
