package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

const mib = 1 << 20

func noEnv(string) string { return "" }

// goal is the runtime's heap goal now.
func goal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// collectUntil collects until the floor has set want, as its sentinel's
// finalizer runs on its own goroutine after a collection.
func collectUntil(t *testing.T, f *Floor, want func(int) bool) {
	t.Helper()
	for range 200 {
		runtime.GC()
		if want(f.Percent()) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("GOGC stayed at %d", f.Percent())
}

func TestFloorRaisesTheGoalOfASmallHeap(t *testing.T) {
	const floor = 64 * mib
	f, _ := Start(floor, noEnv)
	defer f.Stop()
	collectUntil(t, f, func(p int) bool { return p > basePercent })
	// The test binary's live heap is a few MiB: GOGC=100 would put the
	// goal under 16 MiB.
	if g := goal(); g < floor*95/100 || g > floor*105/100 {
		t.Errorf("heap goal %.1f MiB with GOGC %d, want about the floor (%d MiB)", float64(g)/mib, f.Percent(), floor/mib)
	}
}

func TestFloorLeavesALargeHeapAlone(t *testing.T) {
	const floor = 32 * mib
	f, _ := Start(floor, noEnv)
	defer f.Stop()
	collectUntil(t, f, func(p int) bool { return p > basePercent })
	live := make([]byte, 48*mib)
	collectUntil(t, f, func(p int) bool { return p == basePercent })
	// GOGC=100: the goal is about twice the live heap, past the floor.
	if g := goal(); g < 96*mib {
		t.Errorf("heap goal %.1f MiB with 48 MiB live, want at least 96", float64(g)/mib)
	}
	runtime.KeepAlive(live)
	live = nil
	collectUntil(t, f, func(p int) bool { return p > basePercent })
}

func TestStopRestoresTheDefault(t *testing.T) {
	f, _ := Start(64*mib, noEnv)
	collectUntil(t, f, func(p int) bool { return p > basePercent })
	f.Stop()
	if p := debug.SetGCPercent(basePercent); p != basePercent {
		t.Errorf("GOGC %d after Stop, want %d", p, basePercent)
	}
	runtime.GC()
	runtime.GC()
	if p := debug.SetGCPercent(basePercent); p != basePercent {
		t.Errorf("GOGC %d after collections past Stop, want %d", p, basePercent)
	}
}

func TestOperatorSettingsWin(t *testing.T) {
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		f, setting := Start(64*mib, func(n string) string {
			if n == name {
				return "200"
			}
			return ""
		})
		if f != nil || setting != name {
			t.Errorf("with %s set: floor %v, setting %q; want none and %q", name, f, setting, name)
		}
	}
	if f, setting := Start(0, noEnv); f != nil || setting != "" {
		t.Errorf("floor 0: %v, %q; want none", f, setting)
	}
	if p := debug.SetGCPercent(basePercent); p != basePercent {
		t.Errorf("GOGC %d, want it untouched", p)
	}
}

func TestPercentFor(t *testing.T) {
	for _, c := range []struct {
		floor, live, scanned uint64
		want                 int
	}{
		{64 * mib, 8 * mib, 8 * mib, 700},
		{64 * mib, 8 * mib, 10 * mib, 560},
		{64 * mib, 40 * mib, 40 * mib, basePercent}, // the default already reaches it
		{64 * mib, 80 * mib, 80 * mib, basePercent}, // above the floor
		{64 * mib, 1 * mib, 1 * mib, 1600},          // the runtime's scaled minimum: 4 MiB × 16 = 64 MiB
		{64 * mib, 0, 0, basePercent},               // nothing measured yet
		{2 * mib, 1 * mib, 1 * mib, basePercent},    // a floor under the runtime's own minimum
		{64 * mib, 8*mib + 1, 8 * mib, 700},         // rounded up: the goal at or above the floor
	} {
		if got := percentFor(c.floor, c.live, c.scanned); got != c.want {
			t.Errorf("percentFor(floor %d, live %d, scanned %d) = %d, want %d", c.floor, c.live, c.scanned, got, c.want)
		}
	}
}
