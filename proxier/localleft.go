package proxier

import (
	"unique"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// localEndpointsLeft are the addresses of node's endpoints in before that
// now (nil for a deleted slice) no longer holds, or holds not ready where
// before was ready: the pod went, or its containers stopped. Either may be
// the CNI replacing the pod's HNS endpoint behind the same address (a pod
// made again under its name by a StatefulSet, a sandbox made again after
// it died or after the runtime restarted, with an IPAM that gives the
// address back), which the reconciler, naming local endpoints by HNS ID,
// must check again (Reconciler.RecheckLocal). An endpoint that moved to
// another of the Service's slices counts too: checking it costs one get of
// its HNS endpoint and writes nothing.
func localEndpointsLeft(node unique.Handle[string], before, now *desired.EndpointSlice) []string {
	if node == (unique.Handle[string]{}) || before == nil {
		return nil
	}
	var ready map[string]bool
	for _, e := range before.Endpoints {
		if e.Node != node || e.Address == "" {
			continue
		}
		if ready == nil {
			ready = make(map[string]bool)
		}
		ready[e.Address] = e.Ready
	}
	if ready == nil {
		return nil
	}
	if now != nil {
		for _, e := range now.Endpoints {
			if wasReady, ok := ready[e.Address]; ok && e.Node == node && (e.Ready || !wasReady) {
				delete(ready, e.Address)
			}
		}
	}
	left := make([]string, 0, len(ready))
	for ip := range ready {
		left = append(left, ip)
	}
	return left
}
