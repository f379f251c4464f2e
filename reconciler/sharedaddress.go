package reconciler

import "github.com/hnsproxy/hnsproxy/hnslb"

// Remote endpoints on a local endpoint's address. Windows Server 2019 and
// 2022 let a remote and a local endpoint share an address on one network,
// and the pod's traffic then goes to the node the remote endpoint names
// (kubernetes/kubernetes#138000). kube-proxy's winkernel deletes every such
// remote endpoint at each sync, whoever made it
// (deleteAllRemoteEndpointsWithDupIP). hnsproxy's own are deleted once the
// desired state no longer wants them (the pod left the other node); a
// foreign one is what a previous proxy left on the node, which kube-proxy
// never deletes once a restart lost its count (the pod had gone while no
// proxy ran, or before a migration). It is deleted like kube-proxy
// deletes it: at the first Sync for a pod there at Start (pruneOrphans),
// and after a Repair for one that came later. The Repair looks at the
// addresses the local index held when its listing began, so a pod that
// the index learns during the listing is looked at by the next Repair.

// sharedAddressReason is the log's reason for deleting such an endpoint.
const sharedAddressReason = "foreign remote endpoint on a local endpoint's address, which sends the pod's traffic to another node (kubernetes/kubernetes#138000)"

// foreignOnLocalAddress reports whether the remote endpoint id, at ip, is
// foreign and on an address local, a local endpoint index, holds for a
// pod. hnsproxy's own local endpoint (the overlay source VIP) is no pod's:
// a remote endpoint another program makes there is that program's to keep,
// as Calico_ep on the address Calico's kube-proxy script takes for the
// source VIP (borrowedvip.go).
func (r *Reconciler) foreignOnLocalAddress(id, ip string, local map[string]string) bool {
	holder := local[ip]
	if _, ourLocal := r.ownedEPs[holder]; holder == "" || ourLocal {
		return false
	}
	_, ours := r.ownedEPs[id]
	return !ours && !r.unconfirmed.has(id)
}

// keepOnLocalAddress records, during a Repair's listing, a remote endpoint
// on an address the local index held as the listing began; without the lock.
func (l *listedHNS) keepOnLocalAddress(ep *hnslb.Endpoint) {
	if l.localBefore[ep.IP()] != "" {
		l.onLocal = append(l.onLocal, listedEP{ep.ID, ep.IP()})
	}
}

// staleOnLocalAddress marks for deletion the foreign remote endpoints a
// Repair's listing showed on an address a local endpoint still holds; with
// the lock, after the first Sync (until then an Upsert may adopt them).
func (r *Reconciler) staleOnLocalAddress(listed *listedHNS, changed *listingChanges) {
	for _, l := range listed.onLocal {
		if changed.touchedID(l.id) || r.unjudged(changed, idToken(l.id)) || r.staleEPs[l.id] != nil {
			continue
		}
		if r.foreignOnLocalAddress(l.id, l.ip, listed.local) {
			r.markSharedAddress(l.id, l.ip)
		}
	}
}

// markSharedAddress marks the remote endpoint id, a foreign one on a local
// endpoint's address ip, for deletion by the next Sync.
func (r *Reconciler) markSharedAddress(id, ip string) {
	r.log.Info("Remote endpoint will be deleted", "id", id, "ip", ip, "reason", sharedAddressReason)
	r.staleEPs[id] = &staleObj{reason: sharedAddressReason}
}
