//go:build !windows

package main

import (
	"fmt"
	"runtime"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy-diag/diag"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// realHNS: off Windows HNS is the hnssim service, whose provider addresses
// are on no interface of this host.
const realHNS = false

// openHNS reads the hnssim service, through the socket client the daemon
// uses for --hns-endpoint=unix://, wrapped so that only reads remain.
func openHNS(h options.HNS) (hnslb.Reader, func(), error) {
	if path, ok := h.UnixSocket(); ok {
		c := remote.NewClient(path)
		return diag.ReadOnly(c), c.Close, nil
	}
	if h.IsSim() {
		return nil, nil, fmt.Errorf("--hns-endpoint=sim is an empty in-process simulator: point --hns-endpoint at the node's hnssim service (unix:///path/to/hns.sock)")
	}
	return nil, nil, fmt.Errorf("there is no HNS on %s: give --hns-endpoint=unix:///path/to/hnssim.sock (or HNS_ENDPOINT)", runtime.GOOS)
}
