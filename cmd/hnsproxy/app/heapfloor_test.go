package app

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestHeapFloorGivesWayToTheEnvironment(t *testing.T) {
	floor := resource.MustParse("64Mi")
	env := map[string]string{}
	getenv := func(name string) string { return env[name] }

	f := startHeapFloor(context.Background(), floor, getenv)
	if f == nil {
		t.Fatal("no floor with nothing in the environment")
	}
	// The floor retunes after each collection, on the finalizer's goroutine.
	for i := 0; i < 200 && f.Percent() <= 100; i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if p := f.Percent(); p <= 100 {
		t.Errorf("GOGC %d under a 64 MiB floor with the test's small heap, want above 100", p)
	}
	f.Stop()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC %d after Stop, want 100", p)
	}

	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		env = map[string]string{name: "400"}
		if f := startHeapFloor(context.Background(), floor, getenv); f != nil {
			f.Stop()
			t.Errorf("a floor with %s set", name)
		}
	}
	env = map[string]string{}
	if f := startHeapFloor(context.Background(), resource.MustParse("0"), getenv); f != nil {
		f.Stop()
		t.Error("a floor of 0 runs")
	}
}
