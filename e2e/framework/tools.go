//go:build linux

package framework

import (
	"sync"

	"github.com/hnsproxy/hnsproxy/internal/buildscript"
)

// Tool names: the binaries a simulated Windows node runs.
const (
	HNSSimBin    = "hnssim"
	HNSCNIBin    = "hnscni"
	HNSProxyBin  = "hnsproxy"
	HostLocalBin = "host-local"
)

var tools struct {
	once sync.Once
	dir  string
	err  error
}

// Tools builds hnssim, hnscni, hnsproxy and host-local with hack/build.sh
// into _output/bin (once per process) and returns that folder.
// HNSPROXY_TOOLS_DIR names a folder of prebuilt binaries instead.
func Tools() (string, error) {
	tools.once.Do(func() {
		tools.dir, tools.err = buildscript.Tools(HNSSimBin, HNSCNIBin, HNSProxyBin, HostLocalBin)
	})
	return tools.dir, tools.err
}
