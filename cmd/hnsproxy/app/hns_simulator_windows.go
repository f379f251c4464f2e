package app

import (
	"fmt"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
)

// newSimulatorClient refuses: Windows builds talk to the real HNS only, so the
// release binaries carry no simulator (hack/verify-windows.sh checks).
func newSimulatorClient(cfg options.HNS) (hnslb.Client, error) {
	return nil, fmt.Errorf("--hns-endpoint=%q: Windows builds of hnsproxy have no HNS simulator; "+
		"leave --hns-endpoint (and HNS_ENDPOINT) empty to use this machine's HNS, or run the simulator on Linux", cfg.Endpoint)
}
