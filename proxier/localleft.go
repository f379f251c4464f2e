package proxier

import (
	"unique"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// localEndpointsLeft are the addresses of node's endpoints in before that
// now (nil for a deleted slice) no longer holds, or holds not ready or not
// serving where before was: the pod went, or its containers stopped. Either
// may be the CNI replacing the pod's HNS endpoint behind the same address
// (a pod made again under its name by a StatefulSet, a sandbox made again
// after it died or after the runtime restarted, with an IPAM that gives the
// address back), which the reconciler, naming local endpoints by HNS ID,
// must check again (Reconciler.RecheckLocal). Serving counts on its own: a
// Service with publishNotReadyAddresses has the EndpointSlice controller
// keep its pods ready, so a pod whose sandbox died shows only in serving.
// An endpoint that moved to another of the Service's slices counts too:
// checking it costs one get of its HNS endpoint and writes nothing.
func localEndpointsLeft(node unique.Handle[string], before, now *desired.EndpointSlice) []string {
	if node == (unique.Handle[string]{}) || before == nil {
		return nil
	}
	var was map[string]desired.Endpoint
	for _, e := range before.Endpoints {
		if e.Node != node || e.Address == "" {
			continue
		}
		if was == nil {
			was = make(map[string]desired.Endpoint)
		}
		was[e.Address] = e
	}
	if was == nil {
		return nil
	}
	if now != nil {
		for _, e := range now.Endpoints {
			b, ok := was[e.Address]
			if ok && e.Node == node && (e.Ready || !b.Ready) && (e.Serving || !b.Serving) {
				delete(was, e.Address)
			}
		}
	}
	left := make([]string, 0, len(was))
	for ip := range was {
		left = append(left, ip)
	}
	return left
}

// localEndpointsReturned are the addresses of node's endpoints that now
// holds serving where before held them not serving: a pod back after its
// sandbox was made again. Under publishNotReadyAddresses the pod stayed
// ready, so no desired load balancer changes, and the reconciler must look
// again for the new endpoint of the load balancers that left it out
// (Reconciler.LocalReturned).
func localEndpointsReturned(node unique.Handle[string], before, now *desired.EndpointSlice) []string {
	if node == (unique.Handle[string]{}) || before == nil || now == nil {
		return nil
	}
	var notServing map[string]struct{}
	for _, e := range before.Endpoints {
		if e.Node == node && e.Address != "" && !e.Serving {
			if notServing == nil {
				notServing = make(map[string]struct{})
			}
			notServing[e.Address] = struct{}{}
		}
	}
	var back []string
	for _, e := range now.Endpoints {
		if _, was := notServing[e.Address]; was && e.Node == node && e.Serving {
			back = append(back, e.Address)
		}
	}
	return back
}
