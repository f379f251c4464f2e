//go:build linux

package framework

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// ProcessCPU reads the same CPU time getrusage reports for this process,
// to /proc's 10 ms ticks (a wrong field would be off by far more).
func TestProcessCPUAgreesWithGetrusage(t *testing.T) {
	used := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for start := used(); used()-start < 300*time.Millisecond; {
	}
	before := used()
	got, err := ProcessCPU(os.Getpid())
	after := used()
	if err != nil {
		t.Fatal(err)
	}
	if got < before-50*time.Millisecond || got > after+50*time.Millisecond {
		t.Errorf("ProcessCPU = %v, getrusage says %v to %v", got, before, after)
	}
	if _, err := ProcessCPU(-1); err == nil {
		t.Error("ProcessCPU of no process: no error")
	}
}
