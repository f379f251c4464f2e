//go:build linux && benche2e

package main

import (
	"fmt"
	"strings"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// memBreakdown says what a process's resident set is made of, for the
// log of its peak: the kernel's split (/proc/PID/status: anonymous memory,
// file pages such as the binary's text) and, from hnsproxy's /metrics, the
// Go runtime's (heap in use, heap idle and not yet returned to the OS,
// goroutine stacks, the collector's goal). Scraping allocates in hnsproxy,
// so it is done only when the peak rises.
func memBreakdown(pid int, metricsURL string) string {
	var b strings.Builder
	if kib, err := framework.ProcessStatusKiB(pid, "RssAnon", "RssFile"); err == nil {
		fmt.Fprintf(&b, "anon %.1f, file %.1f MiB", float64(kib["RssAnon"])/1024, float64(kib["RssFile"])/1024)
	}
	families, err := scrape(metricsURL)
	if err != nil {
		return b.String()
	}
	for _, g := range []struct{ label, metric string }{
		{"heap in use", "go_memstats_heap_inuse_bytes"},
		{"heap idle", "go_memstats_heap_idle_bytes"},
		{"of it released", "go_memstats_heap_released_bytes"},
		{"stacks", "go_memstats_stack_inuse_bytes"},
		{"runtime other", "go_memstats_other_sys_bytes"},
		{"GC metadata", "go_memstats_gc_sys_bytes"},
		{"goal", "go_memstats_next_gc_bytes"},
	} {
		if f, ok := families[g.metric]; ok && len(f.GetMetric()) > 0 {
			fmt.Fprintf(&b, "; %s %.1f", g.label, f.GetMetric()[0].GetGauge().GetValue()/(1<<20))
		}
	}
	return b.String()
}
