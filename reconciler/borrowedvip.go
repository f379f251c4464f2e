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

// othersEndpoint is an endpoint of another program's: its ID, name and
// what it stands for.
type othersEndpoint struct {
	id, name string
	spec     intent.RemoteEndpoint
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

// logBorrowed says, as the source VIP at ip comes to be borrowed, which
// endpoint serves it. A local one is a pod's (the CNI's, with the pod's
// MAC): a --source-vip that IPAM also gave a pod. winkernel takes that
// endpoint too, but makes its own once the pod goes; hnsproxy, which looks
// only at Start, leaves the source VIP without an endpoint until the next
// start, so the operator is told at once.
func (r *Reconciler) logBorrowed(ip string) {
	held := r.heldByOthers[ip]
	if held.spec.Local {
		r.log.Info("Warning: A pod's endpoint serves the overlay source VIP: --source-vip is an address the pod network's IPAM gave a pod, and once the pod goes no endpoint serves it until hnsproxy restarts; set one the IPAM reserves",
			"sourceVIP", ip, "id", held.id, "name", held.name)
		return
	}
	r.log.Info("Another program's endpoint serves the overlay source VIP; hnsproxy makes, adopts and deletes none there (Calico_ep on Calico VXLAN)",
		"sourceVIP", ip, "id", held.id, "name", held.name)
}
