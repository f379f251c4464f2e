//go:build linux

package framework

import "os"

// InCI says whether the CI environment variable is set, to anything but
// "0" or "false" (.ci/run sets CI=true). In CI what would skip elsewhere
// fails: a test not run there is a test nobody runs.
func InCI() bool {
	ci := os.Getenv("CI")
	return ci != "" && ci != "0" && ci != "false"
}
