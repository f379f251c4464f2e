//go:build !windows

package cni

import (
	"errors"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// platformHNS: off Windows there is no HNS but hnssim's.
func platformHNS() (hnslb.Client, error) {
	return nil, errors.New("not on Windows: set hnsEndpoint or " + EnvHNSEndpoint + " to unix:///path of hnssim's socket")
}
