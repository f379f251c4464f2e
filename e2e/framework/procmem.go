//go:build linux

package framework

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcessMemory reads a process's resident set now (VmRSS) and the peak of
// this process instance (VmHWM) from /proc/PID/status, in KiB: what the soak
// and bench-e2e report of hnsproxy.
func ProcessMemory(pid int) (rssKiB, peakKiB int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		key, val, ok := strings.Cut(s.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/status %s: %w", pid, key, err)
		}
		if key == "VmRSS" {
			rssKiB = n
		} else {
			peakKiB = n
		}
	}
	return rssKiB, peakKiB, s.Err()
}
