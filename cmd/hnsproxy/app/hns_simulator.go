//go:build !windows

package app

import (
	"fmt"

	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// newSimulatorClient is the in-process simulator (--hns-endpoint=sim) or the
// hnssim service (unix://). Development builds only: the Windows release
// binaries leave the simulator out (hns_simulator_windows.go).
func newSimulatorClient(cfg options.HNS) (hnslb.Client, error) {
	if cfg.IsSim() {
		profile, err := sim.ProfileByName(cfg.SimProfile)
		if err != nil {
			return nil, fmt.Errorf("--hns-sim-profile: %w", err)
		}
		klog.InfoS("Using the in-process HNS simulator", "profile", profile.Name, "hnsVersion", profile.Version)
		return sim.New(sim.Options{Profile: profile}), nil
	}
	path, _ := cfg.UnixSocket()
	klog.InfoS("Using the hnssim service", "socket", path)
	return remote.NewClient(path), nil
}
