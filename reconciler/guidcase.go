package reconciler

import (
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// GUIDs as the reconciler holds them. Which case HNS answers GUIDs in is
// not known: lower case in every v2 capture, upper case in the v1 API
// (docs/simulator.md, echo upper-guids), and it may change while hnsproxy
// runs (an update of the node, HNS restarted under a running hnsproxy).
// The reconciler keys its listings, owned sets, baselines and references
// by ID, so every ID an answer carries is lower-cased where the answer
// enters it (deadline_calls.go), as the state file's are at Start. Read as
// answered, a change of case under a running hnsproxy made a drift repair
// take every load balancer and remote endpoint of its own for vanished,
// and the load balancer found on a tenant's frontend when it was made
// again for another agent's, left unowned and never updated again
// (TestGUIDCaseChangedUnderARunningHnsproxy). HNS takes either case in a
// call (hcn parses GUIDs).

// lowerLBGUIDs lower-cases a load balancer's ID and backend references.
func lowerLBGUIDs(lb *hnslb.LoadBalancer) {
	if lb == nil {
		return
	}
	lb.ID = strings.ToLower(lb.ID)
	copied := false
	for i, id := range lb.HostComputeEndpoints {
		low := strings.ToLower(id)
		if low == id {
			continue
		}
		if !copied { // the slice may be shared with the client's own copy
			lb.HostComputeEndpoints = append([]string(nil), lb.HostComputeEndpoints...)
			copied = true
		}
		lb.HostComputeEndpoints[i] = low
	}
}

// lowerLBsGUIDs is lowerLBGUIDs for each of lbs.
func lowerLBsGUIDs(lbs []hnslb.LoadBalancer) {
	for i := range lbs {
		lowerLBGUIDs(&lbs[i])
	}
}

// lowerEndpointGUIDs lower-cases an endpoint's ID and its network and
// namespace references.
func lowerEndpointGUIDs(ep *hnslb.Endpoint) {
	ep.ID = strings.ToLower(ep.ID)
	ep.HostComputeNetwork = strings.ToLower(ep.HostComputeNetwork)
	ep.HostComputeNamespace = strings.ToLower(ep.HostComputeNamespace)
}
