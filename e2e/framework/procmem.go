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

// userHZ is the unit of /proc/PID/stat's CPU times: USER_HZ, 100 on every
// Linux architecture the kernel reports to user space with.
const userHZ = 100

// ProcessCPU reads the CPU time a process has used so far, user and system
// (/proc/PID/stat utime + stime), to 10 ms.
func ProcessCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count from
	// after its closing one (state is field 3, utime 14, stime 15).
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command name", pid, len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}
