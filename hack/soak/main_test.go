//go:build linux

package main

import (
	"strings"
	"testing"
)

// TestFailedNamesEachMissingFault: a run whose planned faults all happened
// passes; one whose kills never landed mid-sync (every kill of a short
// run once fell where no write could begin) fails, naming the field.
func TestFailedNamesEachMissingFault(t *testing.T) {
	const nodes = 2
	full := result{
		APIServerRestarts: apiRestarts, HNSRestarts: hnsRestartsEach * nodes, ProxyKills: killsEach * nodes,
		KillsMidSync: nodes, NodeAddressLosses: nodes, IdleConnFloods: nodes, TenantCollisions: 1, HNSHangs: nodes,
		StateDirMounted: true, StateDirFaults: stateDirFaultsEach * nodes, Converged: true,
	}
	if why := full.failed(nodes); len(why) != 0 {
		t.Fatalf("every planned fault happened, yet failed: %v", why)
	}
	noMidSync := full
	noMidSync.KillsMidSync = nodes - 1
	why := noMidSync.failed(nodes)
	if len(why) != 1 || !strings.Contains(why[0], "kills_mid_sync = 1, want at least 2") {
		t.Fatalf("kills that never landed mid-sync: got %q", why)
	}
	unmounted := full
	unmounted.StateDirMounted, unmounted.StateDirFaults = false, 0
	if why := unmounted.failed(nodes); len(why) != 0 {
		t.Fatalf("no state directory mounted, so no state directory fault planned; got %v", why)
	}
}
