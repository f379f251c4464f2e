//go:build !windows

package hcnclient

import "github.com/hnsproxy/hnsproxy/hnslb"

// New returns ErrNotWindows: there is no HNS off Windows.
func New() (hnslb.Client, error) { return nil, ErrNotWindows }
