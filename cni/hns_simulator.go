//go:build !windows

package cni

import (
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// dialSimulator is the hnssim service at a unix:// endpoint. Development
// builds only: the Windows release binaries leave the simulator out
// (hns_simulator_windows.go).
func dialSimulator(endpoint string) (hnslb.Client, error) {
	c, err := remote.Dial(endpoint)
	if err != nil {
		return nil, err // not a typed nil *remote.Client
	}
	return c, nil
}
