//go:build linux && benche2e

package main

import "strings"

// The bench runs hnsproxy with GODEBUG=gctrace=1, so the Go runtime writes
// a line to hnsproxy's log as each collection ends ("gc 12 @34.567s 3%:
// ..."). The mix phase reads the log after pricing each change to tell the
// changes a collection ran in from the rest (proxylog.go). No clock is matched: the
// meter prices a change up to where the process went quiet, and a marking
// collection keeps it busy, so one that ran during a change has ended, and
// written its line, by the time the change is priced.

// gctraceSetting is the GODEBUG setting that makes the runtime write them.
const gctraceSetting = "gctrace=1"

// proxyEnvironment is hnsproxy's environment for the bench: extra (one
// NAME=VALUE, or empty) and gctrace on; when extra is a GODEBUG, gctrace
// joins its settings.
func proxyEnvironment(extra string) []string {
	if v, ok := strings.CutPrefix(extra, "GODEBUG="); ok {
		if v == "" {
			return []string{"GODEBUG=" + gctraceSetting}
		}
		return []string{"GODEBUG=" + v + "," + gctraceSetting}
	}
	env := []string{"GODEBUG=" + gctraceSetting}
	if extra != "" {
		env = append(env, extra)
	}
	return env
}
