//go:build !windows

package hcnclient

import (
	"errors"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// ErrNotWindows is what New returns off Windows.
var ErrNotWindows = errors.New("HNS is only available on Windows; use the simulator: --hns-endpoint=sim or unix:///path")

// New returns ErrNotWindows: there is no HNS off Windows.
func New() (hnslb.Client, error) { return nil, ErrNotWindows }
