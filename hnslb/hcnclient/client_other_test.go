//go:build !windows

package hcnclient

import (
	"errors"
	"strings"
	"testing"
)

func TestNewOffWindowsPointsAtSimulator(t *testing.T) {
	c, err := New()
	if c != nil || !errors.Is(err, ErrNotWindows) {
		t.Fatalf("New() = %v, %v; want nil, ErrNotWindows", c, err)
	}
	if !strings.Contains(err.Error(), "--hns-endpoint=sim") {
		t.Errorf("error %q does not say how to use the simulator", err)
	}
}
