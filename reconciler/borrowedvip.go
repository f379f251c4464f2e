package reconciler

import "github.com/hnsproxy/hnsproxy/intent"

// The overlay source VIP at an address another program's endpoint holds.
// winkernel takes whatever endpoint HNS has at its source VIP and creates a
// local one only where there is none (syncProxyRules, getEndpointByIpAddress
// then newSourceVIP, kubernetes pkg/proxy/winkernel). Calico for Windows'
// kube-proxy start script counts on that: on Calico's VXLAN network it
// passes as --source-vip the address of Calico_ep, the remote endpoint
// with the node's provider address that Calico's node makes at start and
// needs (projectcalico/calico cni-plugin pkg/dataplane/windows
// createAndAttachVxlanHostEP; sig-windows-tools hostprocess/calico/
// kube-proxy/start.ps1). Load balancers name the source VIP by address, not
// by endpoint, so that endpoint serves them. hnsproxy's own source-VIP
// endpoint (intent.RemoteEndpoint.Local) is therefore shadowed by another
// program's endpoint of another kind or MAC that Start listed at its
// address: not created, never adopted, so neither replaced nor deleted, at
// --cleanup either. The listing of a Start decides: one that goes later is
// not replaced by hnsproxy's until the next start (Calico makes Calico_ep
// again itself).

// othersEndpoint is an endpoint of another program's: its ID and what it
// stands for.
type othersEndpoint struct {
	id   string
	spec intent.RemoteEndpoint
}

// borrowed is the ID of another program's endpoint that serves ep, the
// desired endpoint at ip, as the source VIP, or "". One that is what
// hnsproxy would make (a local endpoint with the host's MAC, as
// kube-proxy's newSourceVIP makes it, or hnsproxy's own whose create reply
// a kill lost) is adopted instead, when a create meets it (syncep.go).
func (r *Reconciler) borrowed(ip string, ep *remoteEP) string {
	held := r.heldByOthers[ip]
	if !ep.spec.Local || remoteMatches(ep.spec, held.spec) {
		return ""
	}
	return held.id
}
