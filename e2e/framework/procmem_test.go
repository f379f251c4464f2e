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

// TestProcessMemoryReadsThisProcess: the fields come out of
// /proc/PID/status as numbers, and a missing process is an error.
func TestProcessMemoryReadsThisProcess(t *testing.T) {
	rss, peak, err := ProcessMemory(os.Getpid())
	if err != nil || rss <= 0 || peak < rss {
		t.Fatalf("ProcessMemory = %d, %d, %v; want a resident set and a peak at least as high", rss, peak, err)
	}
	kib, err := ProcessStatusKiB(os.Getpid(), "RssAnon", "RssFile")
	if err != nil || kib["RssAnon"] <= 0 || kib["RssFile"] <= 0 || len(kib) != 2 {
		t.Fatalf("ProcessStatusKiB = %v, %v; want RssAnon and RssFile only", kib, err)
	}
	if _, _, err := ProcessMemory(-1); err == nil {
		t.Error("ProcessMemory of no process: no error")
	}
}
