//go:build linux

package framework

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePortOutsideEphemeralRange: listener ports come from below the
// kernel's ephemeral range, so no outgoing connection can hold one, and no
// port is handed out twice.
func TestFreePortOutsideEphemeralRange(t *testing.T) {
	lo, hi := listenPortRange()
	if lo >= hi {
		t.Fatalf("empty listen range %d-%d", lo, hi)
	}
	seen := map[int]bool{}
	for range 50 {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < lo || port > hi {
			t.Errorf("port %d outside %d-%d", port, lo, hi)
		}
		if seen[port] {
			t.Errorf("port %d handed out twice", port)
		}
		seen[port] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Errorf("port %d is not free: %v", port, err)
			continue
		}
		l.Close()
	}
	// Outgoing connections take ports from the ephemeral range; ours must not.
	c, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if eph := c.Addr().(*net.TCPAddr).Port; eph >= lo && eph <= hi {
		t.Errorf("an ephemeral port (%d) lies in the listen range %d-%d", eph, lo, hi)
	}
}
