//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
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
		HNSRestartsDroppingObjects: nodes, HNSDeletesKept: 1, HNSPartialCreates: 1,
		NetworkReplacements: 1, NetworkExits: 1,
	}
	if why := full.failed(nodes, true); len(why) != 0 {
		t.Fatalf("every planned fault happened, yet failed: %v", why)
	}
	noMidSync := full
	noMidSync.KillsMidSync = nodes - 1
	why := noMidSync.failed(nodes, false)
	if len(why) != 1 || !strings.Contains(why[0], "kills_mid_sync = 1, want at least 2") {
		t.Fatalf("kills that never landed mid-sync: got %q", why)
	}
	noneKept := full
	noneKept.HNSDeletesKept = 0
	if why := noneKept.failed(nodes, false); len(why) != 1 || !strings.Contains(why[0], "hns_deletes_kept = 0") {
		t.Fatalf("no delete kept: got %q", why)
	}
	nonePartial := full
	nonePartial.HNSPartialCreates = 0
	if why := nonePartial.failed(nodes, false); len(why) != 1 || !strings.Contains(why[0], "hns_partial_creates = 0") {
		t.Fatalf("no partial create: got %q", why)
	}
	noExit := full
	noExit.NetworkExits = 0
	if why := noExit.failed(nodes, false); len(why) != 1 || !strings.Contains(why[0], "network_exits = 0") {
		t.Fatalf("a replaced network hnsproxy did not exit for: got %q", why)
	}
	unmounted := full
	unmounted.StateDirMounted, unmounted.StateDirFaults = false, 0
	if why := unmounted.failed(nodes, false); len(why) != 0 {
		t.Fatalf("no state directory mounted, so no state directory fault planned; got %v", why)
	}
	// In CI the full-disk faults must run: not mounting is a failure there,
	// as a missing Wine is for the Windows tests.
	if why := unmounted.failed(nodes, true); len(why) != 1 || !strings.Contains(why[0], "state_dir_mounted = false") {
		t.Fatalf("no state directory mounted in CI: got %q, want a failure naming state_dir_mounted", why)
	}
}

// TestRestartLossTurnsOverTheVariants: whatever the seed, each node's three
// HNS restarts keep, drop load balancers and drop remote endpoints once each,
// so every run has restarts that drop objects on every node.
func TestRestartLossTurnsOverTheVariants(t *testing.T) {
	for seed := range uint64(5) {
		for node := range 2 {
			seen := map[sim.RestartLoss]bool{}
			for k := range hnsRestartsEach {
				seen[restartLoss(seed, node, k)] = true
			}
			if len(seen) != 3 || seen[sim.RestartLosesEndpoints] {
				t.Errorf("seed %d, node %d: restarts drop %v; want each of keeps-all, load-balancers, remote-endpoints once", seed, node, seen)
			}
		}
	}
}

// TestErrorVariantsTurnOverTheCodes: the two nodes of a run answer each
// unknown code differently, and four seeds in a row give each node every
// code of each.
func TestErrorVariantsTurnOverTheCodes(t *testing.T) {
	for _, c := range []struct {
		name  string
		codes []hnslb.ErrorCode
		of    func(sim.ErrorVariants) hnslb.ErrorCode
	}{
		{"missing backend", sim.MissingBackendCodes(), func(v sim.ErrorVariants) hnslb.ErrorCode { return v.MissingBackend }},
		{"missing load balancer", sim.MissingLoadBalancerCodes(), func(v sim.ErrorVariants) hnslb.ErrorCode { return v.MissingLoadBalancer }},
		{"address taken", sim.AddressTakenCodes(), func(v sim.ErrorVariants) hnslb.ErrorCode { return v.AddressTaken }},
		{"missing network", sim.MissingNetworkCodes(), func(v sim.ErrorVariants) hnslb.ErrorCode { return v.MissingNetwork }},
	} {
		for node := range 2 {
			seen := map[hnslb.ErrorCode]bool{}
			for seed := range uint64(4) {
				v := errorVariants(seed, node)
				if err := v.Check(); err != nil {
					t.Fatal(err)
				}
				seen[c.of(v)] = true
				if c.of(errorVariants(seed, 0)) == c.of(errorVariants(seed, 1)) {
					t.Errorf("%s, seed %d: both nodes answer 0x%x", c.name, seed, uint32(c.of(v)))
				}
			}
			if len(seen) != len(c.codes) {
				t.Errorf("%s, node %d over four seeds: %v, want every code", c.name, node, seen)
			}
		}
	}
}

// TestPartialHoldsTurnsOverTheNodes: whatever the seed, one node's partial
// load balancers hold their frontend and the other's do not.
func TestPartialHoldsTurnsOverTheNodes(t *testing.T) {
	for seed := range uint64(4) {
		if partialHolds(seed, 0) == partialHolds(seed, 1) {
			t.Errorf("seed %d: both nodes' partial load balancers hold their frontend: %v", seed, partialHolds(seed, 0))
		}
	}
}

// TestEchoTurnsOverTheNodes: whatever the seed, one node's HNS takes every
// liberty with its answers and the other's none; over four seeds each node
// meets both, with its partial load balancers holding their frontend and not.
func TestEchoTurnsOverTheNodes(t *testing.T) {
	met := map[[3]bool]bool{}
	for seed := range uint64(4) {
		if (echoArgs(seed, 0) == nil) == (echoArgs(seed, 1) == nil) {
			t.Errorf("seed %d: both nodes answer alike: %v, %v", seed, echoArgs(seed, 0), echoArgs(seed, 1))
		}
		for node := range 2 {
			met[[3]bool{node == 1, echoArgs(seed, node) != nil, partialHolds(seed, node)}] = true
		}
	}
	if len(met) != 8 {
		t.Errorf("over four seeds, (node, echo, partial holds) met %v, want all 8", met)
	}
}

// TestGetsLeaveOutTurnsOverTheNodes: whatever the seed, one node's gets
// leave objects out and the other's do not; over eight seeds each node
// meets both with every echo and partial holding.
func TestGetsLeaveOutTurnsOverTheNodes(t *testing.T) {
	met := map[[4]bool]bool{}
	for seed := range uint64(8) {
		if getsLeaveOut(seed, 0) == getsLeaveOut(seed, 1) {
			t.Errorf("seed %d: both nodes' gets leave out: %v", seed, getsLeaveOut(seed, 0))
		}
		for node := range 2 {
			met[[4]bool{node == 1, echoArgs(seed, node) != nil, partialHolds(seed, node), getsLeaveOut(seed, node)}] = true
		}
	}
	if len(met) != 16 {
		t.Errorf("over eight seeds, (node, echo, partial holds, gets leave out) met %d of 16: %v", len(met), met)
	}
}

// TestNetworkReplacementTurnsOverNodesAndCodes: over four seeds, the
// network is replaced on each node, and under each missing-network code.
func TestNetworkReplacementTurnsOverNodesAndCodes(t *testing.T) {
	nodes, codes := map[int]bool{}, map[hnslb.ErrorCode]bool{}
	for seed := range uint64(4) {
		i := networkReplacedOn(seed, 2)
		nodes[i], codes[errorVariants(seed, i).MissingNetwork] = true, true
	}
	if len(nodes) != 2 || len(codes) != len(sim.MissingNetworkCodes()) {
		t.Errorf("over four seeds: nodes %v, codes %v; want both nodes and every code", nodes, codes)
	}
}
