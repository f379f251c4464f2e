package proxier

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// onNodeUpdate is onNode for an update of this node's Node that changed
// what nodeConfig reads of it: the zone label, the pod CIDRs, the
// addresses. kubelet writes the Node's status on every condition change
// and every few minutes (nodeStatusReportFrequency); such a write is no
// change, and kube-proxy, which reacts to the zone label only, queues no
// sync for it. Queuing one would move the last-queued metric and start
// /healthz's pending update, which then turns 503 while HNS is out on a
// node where nothing changed.
func (p *Proxier) onNodeUpdate(old, obj any) {
	before, wasNode := old.(*v1.Node)
	now, ok := obj.(*v1.Node)
	if wasNode && ok && !nodeReadChanged(before, now) {
		return
	}
	p.onNode(obj)
}

// nodeReadChanged reports whether what nodeConfig reads of the Node
// differs between before and now. Addresses are compared as written, so a
// skipped one (nodeConfig's warning) counts too.
func nodeReadChanged(before, now *v1.Node) bool {
	return before.Labels[v1.LabelTopologyZone] != now.Labels[v1.LabelTopologyZone] ||
		!slices.Equal(desired.PodCIDRsOf(before), desired.PodCIDRsOf(now)) ||
		!slices.Equal(before.Status.Addresses, now.Status.Addresses)
}
