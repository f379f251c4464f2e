package proxier

import (
	"context"
	"net/netip"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/internal/kubeip"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// On overlay, which node hosts a remote pod subnet is the network's
// RemoteSubnetRoute policies, and the CNI writes them, not hnsproxy:
// Flannel's VXLAN backend on Windows adds one (pod CIDR → the node's
// public IP) when it sees a new node's lease, the node's annotations its
// own flanneld writes at start, so after the pod CIDR was assigned. A
// backend in no known subnet is reached through this node (winkernel's
// rule), which is wrong for a pod on a node that joined after the last
// read. Flannel also moves a node's route when the node comes back with
// another public IP under the same Node and pod CIDR (a reboot under DHCP,
// a VM replaced under its name): the pods there keep an address in a known
// subnet, now routed to the wrong node. So the routes are re-read (one HNS
// call, GetNetwork), besides at start and with each drift repair, when the
// cluster says one may have appeared or moved:
//   - another Node's pod CIDR, address or Flannel public IP
//     (FlannelPublicIPAnnotation) appears or changes, or the Node is listed
//     at start (a start as soon as the network is usable can come before
//     Flannel adds the routes of the leases it then reads): re-read until a
//     route covers its pod CIDR and names the node (its Flannel public IP,
//     else one of its addresses when it lists any), for at most routeWait;
//   - a Service's computation meets a remote backend IP in no known subnet
//     that its previous result did not have.
//
// Each trigger reads at most once per subnetReadInterval.
//
// Flannel removes a route when its Node goes, but also for a moment when a
// Windows node's flanneld starts: its first lease has no VTEP MAC, on which
// Flannel elsewhere removes the node's route and adds none until the lease
// with the MAC follows. A read in that moment would send the node's pods
// through this node, replacing their endpoints twice and losing their
// traffic in between, and nothing would read again once the route is
// back. So a route a read no longer has is held in the index while a Node
// still has its pod CIDR, read again like a waiting Node's, for at most
// routeWait (holdVanished).
const (
	// subnetReadInterval: a read costs one HNS call whose answer grows with
	// the cluster (a policy per node), so a burst of joining nodes or new
	// public backends costs at most one read per trigger every 2 s, while a
	// new node's pods, which take longer than that to become ready, find
	// their route already read.
	subnetReadInterval = 2 * time.Second
	// routeWait bounds the reads waiting for a node's route: Flannel adds it
	// within seconds; a CNI whose routes are not the Nodes' pod CIDRs never
	// does, and then the backend trigger and the drift repair remain.
	routeWait = time.Minute
)

// subnetReads is when the routes were read and what asks for a read;
// owned by the sync loop (p.mu).
type subnetReads struct {
	// byNodes and byBackends are the last reads each trigger made.
	byNodes, byBackends time.Time
	// unrouted are the Nodes whose pod CIDR or address changed and no
	// route to them covers yet, with when that was seen.
	unrouted map[string]time.Time
	// held are the prefixes of routes a read no longer had while a Node
	// still has that pod CIDR, kept in the index, with when they vanished
	// (holdVanished).
	held map[netip.Prefix]time.Time
	// backendAsked: a computation met a new backend IP in no known subnet.
	backendAsked bool
	// fresh: the routes were read in this sync (or Run's first computation),
	// so a backend in no subnet asks for nothing more.
	fresh bool
	// readFailure: reads fail while HNS is down or hung, at each retry of a
	// failed drift repair (every 30 s at most); logged once at -v=0.
	readFailure failureStreak
}

// noteUnrouted records Nodes whose pod CIDR or address appeared or changed.
func (p *Proxier) noteUnrouted(names []string) {
	for _, name := range names {
		if p.subnets.unrouted == nil {
			p.subnets.unrouted = map[string]time.Time{}
		}
		p.subnets.unrouted[name] = p.clock.Now()
	}
}

// readSubnetsForTriggers re-reads the routes if a trigger asks and its
// interval has passed, and reports whether it read.
func (p *Proxier) readSubnetsForTriggers(ctx context.Context) bool {
	if p.opts.RemoteSubnets == nil {
		return false
	}
	now := p.clock.Now()
	switch {
	case p.subnets.backendAsked && !now.Before(p.subnets.byBackends.Add(subnetReadInterval)):
		p.subnets.byBackends = now
	case p.nodesWait() && !now.Before(p.subnets.byNodes.Add(subnetReadInterval)):
		p.subnets.byNodes = now
	default:
		return false
	}
	p.readRemoteSubnets(ctx)
	return true
}

// readRemoteSubnets re-reads the routes into the config and drops the
// waiting Nodes a route now covers, or that waited long enough.
func (p *Proxier) readRemoteSubnets(ctx context.Context) {
	logger := klog.FromContext(ctx)
	p.subnets.backendAsked = false
	p.subnets.fresh = true
	read := p.refreshRemoteSubnets(ctx)
	if read != nil {
		p.subnets.readFailure.failed(logger, "Reading overlay remote subnets", "Reading overlay remote subnets failed again", read)
	} else {
		p.subnets.readFailure.ended()
	}
	now := p.clock.Now()
	var gaveUp []string
	for name, since := range p.subnets.unrouted {
		node, err := p.opts.ClusterNodes.Lister().Get(name)
		switch {
		case err != nil || (read == nil && p.routed(node)):
			delete(p.subnets.unrouted, name)
		case now.Sub(since) >= routeWait:
			delete(p.subnets.unrouted, name)
			gaveUp = append(gaveUp, name)
			logger.V(2).Info("No remote subnet route to the node's address covers its pod CIDR",
				"node", name, "podCIDRs", desired.PodCIDRsOf(node), "addresses", node.Status.Addresses, "waited", now.Sub(since))
		}
	}
	// One line for them all: every Node waits at start, and with a CNI
	// whose routes follow its own IPAM blocks, not the Nodes' pod CIDRs,
	// none is ever covered.
	if len(gaveUp) > 0 {
		slices.Sort(gaveUp)
		logger.Info("No remote subnet route to a node's address covers its pod CIDR; their backends are reached as the routes read say until that changes (read again on the next drift repair or a new backend; each node at -v=2)",
			"nodes", len(gaveUp), "first", gaveUp[:min(len(gaveUp), 5)])
	}
}

// routed reports whether a route covers each of node's IPv4 pod CIDRs
// (overlay carries IPv4 only), read as kube-proxy reads CIDRs (kubeip),
// is not only held, and names the node (mayBeProvider: its Flannel public
// IP, else one of its addresses if it lists any of the route's family): a
// route that still names the address a node had before (or the node that
// held the pod CIDR before it) is not the node's yet.
func (p *Proxier) routed(node *v1.Node) bool {
	for _, prefix := range desired.PodCIDRsOf(node) {
		if !prefix.Addr().Is4() {
			continue
		}
		pa, covered := p.cfg.RemoteSubnets.ProviderOf(prefix)
		_, held := p.subnets.held[prefix]
		if !covered || held || !mayBeProvider(node, pa) {
			return false
		}
	}
	return true
}

// mayBeProvider reports whether pa is the public IP node's Flannel
// announces, if it announces one; else whether pa is one of node's
// addresses, or node lists none of pa's family to tell.
func mayBeProvider(node *v1.Node, pa netip.Addr) bool {
	if public, ok := flannelPublicIP(node); ok && pa.Is4() {
		return public == pa
	}
	listed := false
	for _, a := range node.Status.Addresses {
		addr, ok := kubeip.ParseAddr(a.Address)
		if !ok || addr.Is4() != pa.Is4() {
			continue
		}
		if addr == pa {
			return true
		}
		listed = true
	}
	return !listed
}

// nodesWait reports whether a Node waits for its route: one whose pod CIDR
// or address changed, or one whose route is held.
func (p *Proxier) nodesWait() bool {
	return len(p.subnets.unrouted) > 0 || len(p.subnets.held) > 0
}

// holdVanished returns read with the routes the index has and read lacks
// added back while another Node still has their pod CIDR, for at most
// routeWait since they vanished; it forgets the rest.
func (p *Proxier) holdVanished(ctx context.Context, read []desired.RemoteSubnet) []desired.RemoteSubnet {
	present := make(map[netip.Prefix]bool, len(read))
	for _, r := range read {
		present[r.Prefix.Masked()] = true
	}
	now := p.clock.Now()
	var nodeCIDRs map[netip.Prefix]bool // listed once, if a route vanished
	held := map[netip.Prefix]time.Time{}
	for _, r := range p.cfg.RemoteSubnets.Routes() {
		if present[r.Prefix] {
			continue
		}
		if nodeCIDRs == nil {
			nodeCIDRs = p.otherPodCIDRs()
		}
		since, was := p.subnets.held[r.Prefix]
		if !was {
			since = now
		}
		switch {
		case !nodeCIDRs[r.Prefix]:
			continue
		case now.Sub(since) >= routeWait:
			klog.FromContext(ctx).Info("A remote subnet route is gone while a node still has its pod CIDR; its backends are reached through this node until it is back",
				"prefix", r.Prefix, "providerAddress", r.ProviderAddress, "waited", now.Sub(since))
			continue
		}
		held[r.Prefix] = since
		read = append(read, r)
	}
	p.subnets.held = held
	return read
}

// otherRoutedNodes are the names of the other Nodes that have a pod CIDR,
// whose routes the overlay network should hold.
func (p *Proxier) otherRoutedNodes() []string {
	var out []string
	for _, node := range p.otherNodes() {
		if len(desired.PodCIDRsOf(node)) > 0 {
			out = append(out, node.Name)
		}
	}
	return out
}

// otherPodCIDRs are the IPv4 pod CIDRs of every other Node, masked.
func (p *Proxier) otherPodCIDRs() map[netip.Prefix]bool {
	out := map[netip.Prefix]bool{}
	for _, node := range p.otherNodes() {
		for _, prefix := range desired.PodCIDRsOf(node) {
			if prefix.Addr().Is4() {
				out[prefix] = true
			}
		}
	}
	return out
}

// otherNodes are the Nodes other than this one in the cache of every Node
// (none without it).
func (p *Proxier) otherNodes() []*v1.Node {
	if p.opts.ClusterNodes == nil {
		return nil
	}
	nodes, err := p.opts.ClusterNodes.Lister().List(labels.Everything())
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(nodes, func(n *v1.Node) bool { return n.Name == p.opts.NodeName })
}

// nextSubnetRead is when a waiting trigger may read next (false: none waits).
func (p *Proxier) nextSubnetRead() (time.Time, bool) {
	if p.opts.RemoteSubnets == nil {
		return time.Time{}, false
	}
	var next time.Time
	ok := false
	if p.subnets.backendAsked {
		next, ok = p.subnets.byBackends.Add(subnetReadInterval), true
	}
	if p.nodesWait() {
		if t := p.subnets.byNodes.Add(subnetReadInterval); !ok || t.Before(next) {
			next, ok = t, true
		}
	}
	return next, ok
}

// noteNoProviderAddress asks for a read when res has a backend in no known
// subnet that prev, the Service's previous result, did not have: a steady
// public backend asks once, not on every change of its Service.
func (p *Proxier) noteNoProviderAddress(res, prev desired.ServiceResult) {
	if p.opts.RemoteSubnets == nil || p.subnets.fresh || p.subnets.backendAsked {
		return
	}
	for _, ip := range res.NoProviderAddress {
		if _, seen := slices.BinarySearchFunc(prev.NoProviderAddress, ip, netip.Addr.Compare); !seen {
			p.subnets.backendAsked = true
			return
		}
	}
}

// onNodeRouting notes another Node whose pod CIDR, address or Flannel
// public IP appeared or changed (old is nil for a Node added after the
// initial list): its route may appear or move.
func (p *Proxier) onNodeRouting(old, obj any) {
	node, ok := unwrapTombstone(obj).(*v1.Node)
	if !ok || node.Name == p.opts.NodeName || len(desired.PodCIDRsOf(node)) == 0 {
		return
	}
	if prev, ok := old.(*v1.Node); ok && slices.Equal(desired.PodCIDRsOf(prev), desired.PodCIDRsOf(node)) &&
		slices.Equal(prev.Status.Addresses, node.Status.Addresses) &&
		prev.Annotations[FlannelPublicIPAnnotation] == node.Annotations[FlannelPublicIPAnnotation] {
		return
	}
	p.tracker.nodeRoutingChanged(node.Name)
	p.requestSync()
}

// TrimToRouting keeps of a Node only its name, pod CIDRs, IP addresses
// (internal and external: a route's provider address is one of them) and
// the public IP Flannel announces for it (the provider address of its
// route where Flannel writes the routes), before it enters the cache of
// every Node on overlay (ClusterNodes): a few hundred bytes per node, not
// the tens of kilobytes a Node's status and annotations hold.
func TrimToRouting(obj any) (any, error) {
	node, ok := obj.(*v1.Node)
	if !ok {
		return obj, nil
	}
	var addrs []v1.NodeAddress
	for _, a := range node.Status.Addresses {
		if a.Type == v1.NodeInternalIP || a.Type == v1.NodeExternalIP {
			addrs = append(addrs, a)
		}
	}
	var annotations map[string]string
	if public, ok := node.Annotations[FlannelPublicIPAnnotation]; ok {
		annotations = map[string]string{FlannelPublicIPAnnotation: public}
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: node.Name, UID: node.UID, ResourceVersion: node.ResourceVersion, Annotations: annotations},
		Spec:       v1.NodeSpec{PodCIDR: node.Spec.PodCIDR, PodCIDRs: node.Spec.PodCIDRs},
		Status:     v1.NodeStatus{Addresses: addrs},
	}, nil
}
