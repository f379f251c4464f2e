//go:build !windows

package app

import (
	"context"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestHNSClientSelection(t *testing.T) {
	c, err := newHNSClient(options.HNS{Endpoint: "sim", SimProfile: "ws2025"})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.Version(context.Background()); err != nil || v != (hnslb.Version{Major: 15, Minor: 5}) {
		t.Errorf("sim profile ws2025 reports %v, %v", v, err)
	}
	if _, err := newHNSClient(options.HNS{Endpoint: "sim", SimProfile: "ws2003"}); err == nil || !strings.Contains(err.Error(), "--hns-sim-profile") {
		t.Errorf("unknown profile: %v", err)
	}
	// The hnssim client does not connect until used; a call to a socket nobody serves is "unavailable".
	c, err = newHNSClient(options.HNS{Endpoint: "unix://" + t.TempDir() + "/none.sock"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Version(context.Background()); !hnslb.IsUnavailable(err) {
		t.Errorf("unserved socket: %v, want an unavailable error", err)
	}
}
