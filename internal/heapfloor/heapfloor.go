// Package heapfloor keeps the Go collector's heap goal at or above a floor.
//
// With GOGC=100 the runtime collects each time the heap has doubled since
// the last collection. On a small cluster hnsproxy's live heap is a few
// MiB, so it collects every few dozen changes, and the change a
// collection runs beside pays several times its own CPU. The floor makes
// those collections rarer where the heap is small, for memory up to the
// floor; where the live heap is half the floor or more, GOGC=100 already
// gives a goal above it and the runtime's pacing is left alone. Unlike a
// higher GOGC, the floor does not scale the headroom of a large heap, and
// unlike a memory limit it never makes the collector run more often.
package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// basePercent is GOGC's default: the runtime's pacing above the floor.
const basePercent = 100

// The runtime's figures a goal is made of: the next goal is the live heap
// plus GOGC percent of the live heap, the goroutine stacks and the globals.
var samples = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/gc/scan/stack:bytes"},
	{Name: "/gc/scan/globals:bytes"},
}

// Operator settings the floor gives way to: either states how the
// operator wants the collector paced.
var operatorSettings = []string{"GOGC", "GOMEMLIMIT"}

// Floor is a running heap floor.
type Floor struct {
	bytes uint64
	mu    sync.Mutex
	// stopped ends the chain of sentinels; percent is the GOGC last set.
	stopped bool
	percent int
	samples []metrics.Sample
}

// Start keeps the heap goal at or above floor bytes from the next
// collection on (and from now). It returns nil, and changes nothing, when
// floor is 0 or when getenv finds GOGC or GOMEMLIMIT set: then the
// operator paces the collector; the returned setting names which.
func Start(floor uint64, getenv func(string) string) (f *Floor, setting string) {
	for _, name := range operatorSettings {
		if getenv(name) != "" {
			return nil, name
		}
	}
	if floor == 0 {
		return nil, ""
	}
	f = &Floor{bytes: floor, percent: basePercent, samples: append([]metrics.Sample(nil), samples...)}
	f.tune()
	f.arm()
	return f, ""
}

// Stop restores GOGC's default; the floor is not kept after it returns.
func (f *Floor) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	f.percent = basePercent
	debug.SetGCPercent(basePercent)
}

// Percent is the GOGC the floor set last.
func (f *Floor) Percent() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.percent
}

// sentinel is garbage from its birth: its finalizer runs after the next
// collection, retunes, and arms a new one. It holds a pointer, so the
// runtime's tiny allocator (whose objects' finalizers may never run)
// leaves it alone.
type sentinel struct{ floor *Floor }

func (f *Floor) arm() {
	runtime.SetFinalizer(&sentinel{floor: f}, func(s *sentinel) {
		if s.floor.tune() {
			s.floor.arm()
		}
	})
}

// tune sets GOGC for the live heap the last collection left, and reports
// whether the floor still runs.
func (f *Floor) tune() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return false
	}
	metrics.Read(f.samples)
	live := f.samples[0].Value.Uint64()
	scanned := live + f.samples[1].Value.Uint64() + f.samples[2].Value.Uint64()
	if p := percentFor(f.bytes, live, scanned); p != f.percent {
		f.percent = p
		debug.SetGCPercent(p)
	}
	return true
}

// runtimeHeapMinimum is the runtime's smallest goal at GOGC=100; it scales
// with GOGC (4 MiB × GOGC/100), so a GOGC far above the floor's need would
// raise the goal past the floor on its own.
const runtimeHeapMinimum = 4 << 20

// percentFor is the GOGC whose goal, live + scanned×GOGC/100, reaches
// floor: never below the default, and never so high that the runtime's
// scaled minimum passes the floor (a nearly empty heap's goal is then that
// minimum, just under the floor).
func percentFor(floor, live, scanned uint64) int {
	if scanned == 0 || live >= floor {
		return basePercent
	}
	// Rounded up, so the goal is at or just above the floor.
	p := ((floor-live)*100 + scanned - 1) / scanned
	return int(max(min(p, floor*100/runtimeHeapMinimum), basePercent))
}
