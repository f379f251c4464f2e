package main

import (
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// meteredHNS wraps the simulator and adds up the CPU its calls spend on the
// calling thread, so that the simulator's own work (validation scans, deep
// copies) can be taken out of the proxier's CPU figure. The simulated
// latency is a timer sleep inside the call: no thread CPU, but the Go
// runtime's hand-offs around a parked goroutine run on other threads and
// are charged to the proxier (see docs/benchmarks.md).
type meteredHNS struct {
	hnslb.Client              // the simulator, each call metered (meterCall)
	cpu          atomic.Int64 // nanoseconds
	calls        atomic.Int64
	// probe is what one meter costs outside the interval it measures (the
	// thread pinning, the clock reads' halves outside it): without the
	// simulator's calls, the proxier's figure would not have it.
	probe time.Duration
}

var _ hnslb.Client = (*meteredHNS)(nil)

func newMeteredHNS(inner hnslb.Client) *meteredHNS {
	m := &meteredHNS{}
	m.Client = hnslb.Around(inner, m.meterCall)
	m.probe = m.calibrate()
	return m
}

// CPU is the thread CPU spent inside simulator calls so far.
func (m *meteredHNS) CPU() time.Duration { return time.Duration(m.cpu.Load()) }

// ProbeCPU is the CPU the metering itself cost the proxier's figure so far.
func (m *meteredHNS) ProbeCPU() time.Duration { return time.Duration(m.calls.Load()) * m.probe }

// meter runs fn pinned to one OS thread and charges its thread CPU to the simulator.
func (m *meteredHNS) meter(fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	m.calls.Add(1)
	start := threadCPU()
	fn()
	m.cpu.Add(int64(threadCPU() - start))
}

// calibrate measures the meter's cost outside its interval, the median of
// a few rounds of empty meters: the thread CPU of the round less what the
// meters charged to their calls, per meter.
func (m *meteredHNS) calibrate() time.Duration {
	const rounds, perRound = 7, 2000
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	costs := make([]time.Duration, rounds)
	for i := range costs {
		cpu0, in0 := threadCPU(), m.cpu.Load()
		for range perRound {
			m.meter(func() {})
		}
		costs[i] = (threadCPU() - cpu0 - time.Duration(m.cpu.Load()-in0)) / perRound
	}
	m.cpu.Store(0)
	m.calls.Store(0)
	slices.Sort(costs)
	return costs[rounds/2]
}

// meterCall makes one simulator call, metered.
func (m *meteredHNS) meterCall(_ string, call func() error) (err error) {
	m.meter(func() { err = call() })
	return err
}
