package diag

import (
	"fmt"
	"net/netip"
	"strings"
)

// Backends hnsproxy serves by a local endpoint alone (intent.Backend.Local:
// its slice places the address on this node, or on no node inside this
// node's pod subnet, proxier/desired/ownsubnet.go) wait for the CNI to wire
// a pod at their address: the reconciler leaves one out of its load
// balancer while no local endpoint holds it (a host-network pod's never
// gets one), and programs no load balancer whose every backend waits. No sync or drift repair of hnsproxy's changes
// that, so the diagnosis must not promise one does.

// unwired are the backends among bs the row lacks that are served by a
// local endpoint alone and whose address no local endpoint on the network
// holds.
func (v *view) unwired(bs []Backend) []string {
	var out []string
	for _, b := range bs {
		if b.State != "missing" || !b.Local {
			continue
		}
		if ip, err := netip.ParseAddr(b.IP); err == nil && !v.localHolds(ip) {
			out = append(out, b.IP)
		}
	}
	return out
}

// localHolds reports whether a local endpoint on the diagnosed network
// holds ip. The set is built on first use: most reports never ask.
func (v *view) localHolds(ip netip.Addr) bool {
	if v.localAddrs == nil {
		v.localAddrs = map[netip.Addr]struct{}{}
		for _, ep := range v.endpoints {
			if ep.IsRemote() || !strings.EqualFold(ep.HostComputeNetwork, v.in.Network.ID) {
				continue
			}
			for _, c := range ep.IpConfigurations {
				if a, err := netip.ParseAddr(c.IpAddress); err == nil {
					v.localAddrs[a.Unmap()] = struct{}{}
				}
			}
		}
	}
	_, ok := v.localAddrs[ip]
	return ok
}

// unwiredWhy says why the backends at ips are left out. none is true
// where they are all the load balancer's backends, so hnsproxy programs
// none.
func unwiredWhy(ips []string, none bool) string {
	what := "hnsproxy leaves such a backend out of its load balancer until the CNI wires a pod there"
	if none {
		what = "with no other backend, hnsproxy programs no load balancer here until the CNI wires a pod at one"
	}
	return fmt.Sprintf("no endpoint of this node holds %s: served by a pod's local endpoint only (its EndpointSlice places it on this node, or on no node inside this node's pod subnet), %s; no sync of hnsproxy's changes that, as kube-proxy's winkernel also skips a local endpoint HNS lacks (a pod not started yet, a host-network pod, or one gone while a hand-made Endpoints object still lists it)",
		strings.Join(ips, ", "), what)
}
