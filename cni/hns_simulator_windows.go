package cni

import (
	"fmt"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// dialSimulator refuses: Windows builds talk to the real HNS only, so the
// release binaries carry no simulator (hack/verify-windows.sh checks).
func dialSimulator(endpoint string) (hnslb.Client, error) {
	return nil, fmt.Errorf("%q: Windows builds of hnscni have no HNS simulator; leave hnsEndpoint (and %s) empty to use this machine's HNS", endpoint, EnvHNSEndpoint)
}
