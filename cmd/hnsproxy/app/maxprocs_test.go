package app

import (
	"context"
	"runtime"
	"testing"
)

func TestMaxProcsGivesWayToTheEnvironment(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(was)
	none := func(string) string { return "" }

	runtime.GOMAXPROCS(3)
	if got := setMaxProcs(context.Background(), 1, none); got != 1 {
		t.Errorf("--gomaxprocs=1: Go runs on %d processors, want 1", got)
	}
	runtime.GOMAXPROCS(3)
	if got := setMaxProcs(context.Background(), 0, none); got != 3 {
		t.Errorf("--gomaxprocs=0: %d processors, want Go's 3 left alone", got)
	}
	set := func(name string) string {
		if name == "GOMAXPROCS" {
			return "3"
		}
		return ""
	}
	if got := setMaxProcs(context.Background(), 1, set); got != 3 {
		t.Errorf("GOMAXPROCS=3 in the environment: %d processors, want 3", got)
	}
}
