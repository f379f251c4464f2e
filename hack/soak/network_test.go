//go:build linux

package main

import (
	"context"
	"testing"
	"time"
)

// A kill that waits past the settle time (its writes did not begin: a full
// state directory, a hung HNS) does not fail the network replacement: the
// wait counts from the kill's end. Without a kill, a proxy that never reads
// the network does fail it, and no exit is expected.
func TestNetworkReplacementWaitsOutAKill(t *testing.T) {
	c := &chaos{killing: map[string]bool{"win-a": true}, networkExit: map[string]bool{}}
	const settle = 3 * watchEvery
	go func() {
		time.Sleep(4 * settle)
		c.networkExitMu.Lock()
		c.killing["win-a"] = false
		c.networkExitMu.Unlock()
	}()
	if err := c.awaitRunningOn(context.Background(), "win-a", settle, func() bool { return true }); err != nil {
		t.Fatalf("a kill longer than the settle time failed the wait: %v", err)
	}
	if !c.networkExit["win-a"] {
		t.Error("the exit is not expected after the wait")
	}

	if err := c.awaitRunningOn(context.Background(), "win-b", settle, func() bool { return false }); err == nil {
		t.Error("a proxy that never read the network passed the wait")
	}
	if c.networkExit["win-b"] {
		t.Error("an exit is expected of a proxy that never read the network")
	}
}
