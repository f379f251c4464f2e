//go:build linux

package framework

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// ProcessCPU reads the same CPU time getrusage reports for this process,
// to a millisecond (a wrong clock would be off by far more: the process
// has used 300 ms), and refuses what is not another process's pid.
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
	if got < before-time.Millisecond || got > after+time.Millisecond {
		t.Errorf("ProcessCPU = %v, getrusage says %v to %v", got, before, after)
	}
	for _, pid := range []int{-1, 0, 1<<22 + 1, 1 << 30} {
		if _, err := ProcessCPU(pid); err == nil {
			t.Errorf("ProcessCPU(%d): no error", pid)
		}
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
