package main

import (
	"iter"
	"net/netip"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// verify compares HNS's contents with the harness's own model, object by
// object: one load balancer per Service, on its cluster IP, TCP port 80 to
// 8080, whose backends are its ready endpoints' pods (each through an
// endpoint of its kind: a local pod's local endpoint, a remote pod's
// remote one), and a remote endpoint for exactly the remote pods some
// ready endpoint names (on overlay also one per cluster IP, and each
// one's provider address is its pod's node, a cluster IP's this node). Counts alone would pass a load
// balancer on another Service's pods, or a stale remote endpoint in place
// of a missing one.
func verify(c *cluster, n *node, rep *report, when string) {
	byVIP := make(map[string]int, len(c.svcs))
	for i, s := range c.svcs {
		byVIP[s.Spec.ClusterIP] = i
	}
	// wantRemote is the node of each address that needs a remote endpoint
	// (an overlay cluster IP's is this node); found ones are taken out.
	wantRemote := map[string]int{}
	for p, refs := range c.readyRefs {
		if refs > 0 && !c.pods[p].local() {
			wantRemote[c.pods[p].ip] = c.pods[p].node
		}
	}
	if c.spec.Overlay {
		for vip := range byVIP {
			wantRemote[vip] = thisNode
		}
	}
	// Read in place, not copied: a snapshot's copies were garbage that the
	// next phase's measured changes paid to sweep and collect.
	remote, unwanted, wrongPA, lbs, wrong := 0, 0, 0, 0, 0
	n.hns.Inspect(func(endpoints iter.Seq[*hnslb.Endpoint], loadBalancers iter.Seq[*hnslb.LoadBalancer]) {
		byID := map[string]*hnslb.Endpoint{}
		for e := range endpoints {
			byID[e.ID] = e
			if !e.IsRemote() {
				continue
			}
			remote++
			node, ok := wantRemote[e.IP()]
			if !ok {
				unwanted++ // no pod needs it, or a second one on the address
				continue
			}
			delete(wantRemote, e.IP())
			if c.spec.Overlay && e.ProviderAddress() != nodeIP(node).String() {
				wrongPA++
			}
		}
		lbOn := make([]bool, len(c.svcs))
		for lb := range loadBalancers {
			lbs++
			if len(lb.FrontendVIPs) != 1 {
				wrong++
				continue
			}
			i, ok := byVIP[lb.FrontendVIPs[0]]
			if _, err := netip.ParseAddr(lb.FrontendVIPs[0]); err != nil || !ok || lbOn[i] || !c.servedBy(i, lb, byID) {
				wrong++
			}
			if ok {
				lbOn[i] = true
			}
		}
	})
	if want := c.expectedRemoteEndpoints(); remote != want {
		rep.problem("%s: HNS holds %d remote endpoints, want %d", when, remote, want)
	}
	if unwanted > 0 {
		rep.problem("%s: %d remote endpoints on addresses that need none (or a second on one that needs one); %d wanted are missing", when, unwanted, len(wantRemote))
	}
	if wrongPA > 0 {
		rep.problem("%s: %d remote endpoints have a provider address other than their pod's node", when, wrongPA)
	}
	if lbs != c.expectedLBs() {
		rep.problem("%s: HNS holds %d load balancers, want %d", when, lbs, c.expectedLBs())
	}
	if wrong > 0 {
		rep.problem("%s: %d load balancers have an unknown frontend, a second one's frontend, the wrong port or the wrong backends", when, wrong)
	}
}

// servedBy says whether lb is what Service i wants: one TCP port mapping
// from its port to the target port, and as backends exactly its ready
// endpoints' pods, each through an endpoint of its kind. Every wanted pod
// found among as many backends as it has ready endpoints (distinct pods)
// leaves room for nothing else.
func (c *cluster) servedBy(i int, lb *hnslb.LoadBalancer, eps map[string]*hnslb.Endpoint) bool {
	if len(lb.PortMappings) != 1 {
		return false
	}
	if pm := lb.PortMappings[0]; pm.Protocol != hnslb.ProtocolTCP || pm.ExternalPort != servicePort || pm.InternalPort != targetPort {
		return false
	}
	if len(lb.HostComputeEndpoints) != c.expectedBackends(i) {
		return false
	}
	for j, p := range c.members[i] {
		if !c.ready[i][j] {
			continue
		}
		pod := c.pods[p]
		found := false
		for _, id := range lb.HostComputeEndpoints {
			if e := eps[id]; e != nil && e.IP() == pod.ip && e.IsRemote() == !pod.local() {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
