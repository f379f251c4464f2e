//go:build linux

package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
)

// useProfiles sets the nodes' HNS builds (-profiles): one hnssim profile
// (sim.Profiles) per node, in node order, comma-separated.
func useProfiles(list string) error {
	names := strings.Split(list, ",")
	if len(names) != len(clusterSpec.Nodes) {
		return fmt.Errorf("profiles %q: want %d, one per node", list, len(clusterSpec.Nodes))
	}
	for i, name := range names {
		name = strings.TrimSpace(name)
		if _, err := sim.ProfileByName(name); err != nil {
			return err
		}
		clusterSpec.Nodes[i].Profile = name
	}
	return nil
}

// profileList is the nodes' profiles in node order, as -profiles takes them.
func profileList() string {
	var names []string
	for _, n := range clusterSpec.Nodes {
		names = append(names, n.Profile)
	}
	return strings.Join(names, ",")
}

// hnsCap is the backend cap node's HNS enforces: its build's, or one the
// profile models below it (ws2022-cap64), which hnsproxy only learns from
// HNS refusing a larger load balancer (reconciler/backendcap.go).
func hnsCap(node framework.NodeSpec) int {
	p, err := sim.ProfileByName(node.Profile)
	if err != nil {
		return 0
	}
	return p.Features().MaxBackends
}

// bigServicesWanted says whether some node's HNS enforces the
// 64-destination cap: then Services over more than 64 pods (bigPool) are
// part of the run, or the cap is never met.
func bigServicesWanted() bool {
	return slices.ContainsFunc(clusterSpec.Nodes, func(n framework.NodeSpec) bool { return hnsCap(n) == hnslb.MaxBackendsLegacy })
}

// workedAround are the OS bugs hnsproxy works around on node ns: the
// known bugs of its build (hnslb.KnownOSBugs) that can hurt the rig's
// traffic (the pod-to-Service DSR bug on l2bridge, where the rig passes
// --enable-dsr; the NodePort one on overlay), unless the rig ran it with
// --os-bug-workarounds=none (framework.NodeSpec.BugWorkaroundsFlag).
func workedAround(ns nodeSettings) []hnslb.OSBug {
	if ns.BugWorkarounds == "none" {
		return nil
	}
	var bugs []hnslb.OSBug
	for _, bug := range hnslb.KnownOSBugs(ns.OSBuild) {
		switch {
		case bug == hnslb.BugL2BridgeDSRPodToService && ns.Mode == desired.L2Bridge,
			bug == hnslb.BugOverlayNodePortRemote && ns.Mode == desired.Overlay:
			bugs = append(bugs, bug)
		}
	}
	return bugs
}

// backendCap is the cap hnsproxy converges to on node ns: its build's
// default (hnslb.DefaultBackendCap), or HNS's own where lower, once a
// Service over more than that made HNS refuse.
func backendCap(ns nodeSettings) int {
	c := hnslb.DefaultBackendCap(ns.OSBuild, ns.Version).Max
	if ns.HNSCap > 0 && ns.HNSCap < c {
		return ns.HNSCap
	}
	return c
}
