package desired

import "slices"

// Endpoint choice per KEP-1669 and topology, the way kube-proxy's Linux
// proxiers categorize endpoints (pkg/proxy/topology.go): Ready endpoints; if
// there are none, serving-terminating ones; never non-serving. Local-only
// selection is made before that fallback, independently of the cluster-wide
// one. Topology applies to cluster-wide selection only, and only through
// EndpointSlice hints: like the Linux proxies, the Service's
// trafficDistribution field is not read here (the EndpointSlice controller
// turns it into hints).

// selection is the endpoints one kind of load balancer uses.
type selection struct {
	endpoints []*endpoint
	// fallback: no ready endpoint was usable, these are serving-terminating.
	fallback bool
	// zoneUnknown: every ready endpoint has zone hints, but this node has
	// no zone to read them for, so they were ignored (kube-proxy logs the
	// same case, "node is missing label").
	zoneUnknown bool
}

// topologyMode says which hints cluster-wide selection honours.
type topologyMode int

const (
	topologyNone topologyMode = iota
	topologySameZone
	topologySameNode
)

// modeFromHints: same-node if every ready endpoint has node hints and one
// names this node; else same-zone if every ready endpoint has zone hints and
// one names this node's zone; else none. zoneUnknown: the mode is none only
// because this node has no zone for the zone hints every ready endpoint has.
func modeFromHints(eps []*endpoint, node, zone string) (mode topologyMode, zoneUnknown bool) {
	anyReady, allNode, forNode, allZone, forZone := false, true, false, true, false
	for i := range eps {
		ep := eps[i]
		if !ep.ready {
			continue
		}
		anyReady = true
		if len(ep.nodeHints) == 0 {
			allNode = false
		} else if slices.Contains(ep.nodeHints, node) {
			forNode = true
		}
		if len(ep.zoneHints) == 0 {
			allZone = false
		} else if slices.Contains(ep.zoneHints, zone) {
			forZone = true
		}
	}
	switch {
	case !anyReady:
		return topologyNone, false
	case allNode && forNode:
		return topologySameNode, false
	case allZone && forZone:
		return topologySameZone, false
	}
	return topologyNone, allZone && zone == ""
}

func (m topologyMode) admits(ep *endpoint, node, zone string) bool {
	switch m {
	case topologySameNode:
		return slices.Contains(ep.nodeHints, node)
	case topologySameZone:
		return slices.Contains(ep.zoneHints, zone)
	}
	return true
}

// clusterSelection is what Cluster traffic policy uses.
func clusterSelection(eps []*endpoint, node, zone string) selection {
	mode, zoneUnknown := modeFromHints(eps, node, zone)
	out := make([]*endpoint, 0, len(eps))
	for i := range eps {
		if eps[i].ready && mode.admits(eps[i], node, zone) {
			out = append(out, eps[i])
		}
	}
	if len(out) > 0 {
		return selection{endpoints: out, zoneUnknown: zoneUnknown}
	}
	// No ready endpoint anywhere (a mode is only chosen when one exists for
	// this node or zone), so fall back regardless of topology.
	for i := range eps {
		if eps[i].servingTerminating() {
			out = append(out, eps[i])
		}
	}
	return selection{endpoints: out, fallback: len(out) > 0}
}

// localSelection is what Local traffic policy (and preserve-destination) uses.
func localSelection(eps []*endpoint) selection {
	var out []*endpoint
	for i := range eps {
		if eps[i].local && eps[i].ready {
			out = append(out, eps[i])
		}
	}
	if len(out) > 0 {
		return selection{endpoints: out}
	}
	for i := range eps {
		if eps[i].local && eps[i].servingTerminating() {
			out = append(out, eps[i])
		}
	}
	return selection{endpoints: out, fallback: len(out) > 0}
}
