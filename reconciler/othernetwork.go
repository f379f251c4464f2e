package reconciler

import (
	"context"
	"slices"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Endpoints of hnsproxy's on a network it no longer uses. An operator who
// moves the node to another network (another --network-name: Flannel's
// host-gw "cbr0" to its VXLAN "vxlan0", say) may leave the old one in
// place, and with it the remote endpoints hnsproxy made there. Start lists
// only the network it uses, so without a record of where its endpoints
// were it forgot them as gone: a leak for good, each holding a pod IP on
// a network a CNI may still use. The state file records the networks its
// endpoints may be on (stateFile.Networks); Start lists each other one,
// and the endpoints of hnsproxy's on it are stale: the first Sync deletes
// them once no load balancer of hnsproxy's uses them. A network that is
// gone lists nothing, as hcn's filtered query answers. What a listing of
// a network gone (or a hung one) answers otherwise is not known, and a
// Start that failed on it would fail for good: then every endpoint the
// state file owns that the network in use does not show is deleted by ID
// instead, and one gone answers "not found".

// staleElsewhere owns, as stale, the endpoints the state file owns on the
// networks it recorded other than the one hnsproxy uses now; listed are
// the endpoints of the network in use.
func (r *Reconciler) staleElsewhere(ctx context.Context, st *stateFile, ownedEP map[string]struct{}, listed []hnslb.Endpoint) {
	for _, network := range st.Networks {
		if strings.EqualFold(network, r.opts.NetworkID) {
			continue
		}
		eps, err := r.client.ListEndpointsOfNetwork(ctx, network)
		if err != nil && !hnslb.IsNotFound(err) {
			n := r.staleUnlisted(st, listed, network)
			r.log.Error(err, "Listing a network where the state file has endpoints of hnsproxy's failed; deleting by ID those the network in use does not show",
				"network", network, "endpoints", n)
			continue
		}
		n := 0
		for _, ep := range eps {
			if _, ours := ownedEP[strings.ToLower(ep.ID)]; !ours || !strings.EqualFold(ep.HostComputeNetwork, network) {
				continue
			}
			r.markElsewhere(ep.ID, network)
			n++
		}
		if n > 0 {
			r.log.Info("Deleting endpoints of hnsproxy's on a network it no longer uses", "network", network, "endpoints", n, "networkNow", r.opts.NetworkID)
		}
	}
}

// staleUnlisted makes stale, as on network, every endpoint the state file
// owns that listed (the network in use) does not show, and returns how
// many it marked.
func (r *Reconciler) staleUnlisted(st *stateFile, listed []hnslb.Endpoint, network string) int {
	shown := make(map[string]struct{}, len(listed))
	for i := range listed {
		shown[strings.ToLower(listed[i].ID)] = struct{}{}
	}
	n := 0
	for _, id := range st.ownedEPs() {
		if _, ok := shown[strings.ToLower(id)]; ok || r.staleEPs[id] != nil {
			continue
		}
		r.markElsewhere(id, network)
		n++
	}
	return n
}

// markElsewhere owns the endpoint id on network as stale.
func (r *Reconciler) markElsewhere(id, network string) {
	r.ownedEPs[id] = struct{}{}
	r.staleEPs[id] = &staleObj{reason: "ours, on network " + network + ", which hnsproxy no longer uses", network: network}
}

// endpointNetworks are the networks the state file records for the
// endpoints it owns: the one hnsproxy uses, and those where endpoints of
// its are still to be deleted.
func (r *Reconciler) endpointNetworks() []string {
	networks := []string{r.opts.NetworkID}
	for _, s := range r.staleEPs {
		if s.network != "" && !slices.Contains(networks, s.network) {
			networks = append(networks, s.network)
		}
	}
	return networks
}
