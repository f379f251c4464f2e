//go:build linux

package framework

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ProcessMemory reads a process's resident set now (VmRSS) and the peak of
// this process instance (VmHWM) from /proc/PID/status, in KiB: what the soak
// and bench-e2e report of hnsproxy.
func ProcessMemory(pid int) (rssKiB, peakKiB int64, err error) {
	kib, err := ProcessStatusKiB(pid, "VmRSS", "VmHWM")
	return kib["VmRSS"], kib["VmHWM"], err
}

// ProcessStatusKiB reads the given kB fields of /proc/PID/status (VmRSS,
// RssAnon, RssFile, ...), in KiB.
func ProcessStatusKiB(pid int, keys ...string) (map[string]int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make(map[string]int64, len(keys))
	s := bufio.NewScanner(f)
	for s.Scan() {
		key, val, ok := strings.Cut(s.Text(), ":")
		if !ok || !slices.Contains(keys, key) {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("/proc/%d/status %s: %w", pid, key, err)
		}
		out[key] = n
	}
	return out, s.Err()
}

// ProcessCPU reads the CPU time a process has used so far, user and system,
// its threads' that have exited included, to the nanosecond: the kernel's
// CPU-time clock of the process (clock_getcpuclockid), which any process
// of the same user may read. /proc/PID/stat's utime and stime count 10 ms
// ticks, too coarse for one change's cost.
func ProcessCPU(pid int) (time.Duration, error) {
	// The clock of pid 0 is the caller's own; a clock ID holds 28 bits of
	// pid (the kernel's pids stop at 2^22).
	if pid <= 0 || pid >= 1<<28 {
		return 0, fmt.Errorf("process CPU of pid %d: not a process", pid)
	}
	// MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) in the kernel's
	// posix-timers.h: the pid inverted, shifted past the clock kind.
	const cpuclockSched = 2
	clock := int32(^pid<<3 | cpuclockSched)
	var ts unix.Timespec
	if err := unix.ClockGettime(clock, &ts); err != nil {
		return 0, fmt.Errorf("process CPU of pid %d: %w", pid, err)
	}
	return time.Duration(ts.Nano()), nil
}
