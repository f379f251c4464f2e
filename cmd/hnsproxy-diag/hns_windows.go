package main

import (
	"fmt"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy-diag/diag"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/hnslb/hcnclient"
)

// realHNS: on Windows the overlay provider address is on a host interface.
const realHNS = true

// openHNS reads the node's real HNS through hcn, wrapped so that only reads
// remain. The Windows build carries no simulator client.
func openHNS(h options.HNS) (hnslb.Reader, func(), error) {
	if h.Endpoint != "" {
		return nil, nil, fmt.Errorf("--hns-endpoint %q: the Windows build reads the real HNS only (leave it and HNS_ENDPOINT unset)", h.Endpoint)
	}
	c, err := hcnclient.New()
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to HNS: %w", err)
	}
	return diag.ReadOnly(c), func() {}, nil
}
