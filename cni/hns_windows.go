//go:build windows

package cni

import (
	"errors"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// platformHNS is the real HNS through hcn. Until the hcn adapter lands on
// this branch, Windows needs an explicit hnsEndpoint.
func platformHNS() (hnslb.Client, error) {
	return nil, errors.New("the hcn adapter is not built in: set hnsEndpoint or " + EnvHNSEndpoint)
}
