package hcnclient

import "errors"

// ErrNotWindows is what New returns off Windows. It is declared on every
// platform so callers can test for it without build tags.
var ErrNotWindows = errors.New("HNS is only available on Windows; use the simulator: --hns-endpoint=sim or unix:///path")
