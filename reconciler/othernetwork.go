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
//
// A state file without networks says nothing of where its endpoints are:
// one an hnsproxy from before the field wrote, one an older hnsproxy
// rewrote after a downgrade (it drops the field it does not know), a
// journal without its snapshot. Taking that for "all on the network in use"
// forgot the others. Absence is unknown instead: the owned endpoints the
// network in use does not show are looked for on every network, in one
// listing, and those elsewhere are stale there, their networks recorded
// from then on. When that listing fails they are deleted by ID, and until
// they are gone the state file again records no networks, so a restart
// looks for them anew.

// networkUnknown is the network of an endpoint of ours that the network in
// use does not show, under a state file that recorded no networks, when
// the listing of every network failed. It is never written:
// endpointNetworks records no networks while one is stale there.
const networkUnknown = "(not recorded)"

// staleElsewhere owns, as stale, the endpoints the state file owns on the
// networks it recorded other than the one hnsproxy uses now; listed are
// the endpoints of the network in use.
func (r *Reconciler) staleElsewhere(ctx context.Context, st *stateFile, ownedEP map[string]struct{}, listed []hnslb.Endpoint) {
	if len(st.Networks) == 0 { // never written empty: the network in use is always there
		r.staleUnrecorded(ctx, st, listed)
		return
	}
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

// staleUnrecorded owns, as stale, the endpoints of a state file that
// recorded no networks which the network in use (listed) does not show
// and another network holds; see above.
func (r *Reconciler) staleUnrecorded(ctx context.Context, st *stateFile, listed []hnslb.Endpoint) {
	unshown := foldedSet(unshownOwned(st, listed))
	if len(unshown) == 0 {
		return
	}
	all, err := r.client.ListEndpoints(ctx)
	if err != nil {
		n := r.staleUnlisted(st, listed, networkUnknown)
		r.log.Error(err, "Listing every network's endpoints failed, under a state file that recorded no networks; deleting by ID the endpoints of hnsproxy's the network in use does not show",
			"endpoints", n)
		return
	}
	n := 0
	for _, ep := range all {
		if _, ours := unshown[strings.ToLower(ep.ID)]; !ours || strings.EqualFold(ep.HostComputeNetwork, r.opts.NetworkID) || r.staleEPs[ep.ID] != nil {
			continue
		}
		network := ep.HostComputeNetwork
		if network == "" {
			network = networkUnknown
		}
		r.markElsewhere(ep.ID, network)
		n++
	}
	if n > 0 {
		r.log.Info("Deleting endpoints of hnsproxy's on networks it no longer uses, which the state file did not record (written by an older hnsproxy?)", "endpoints", n, "networkNow", r.opts.NetworkID)
	}
}

// unshownOwned are the endpoints the state file owns that listed (the
// network in use) does not show.
func unshownOwned(st *stateFile, listed []hnslb.Endpoint) []string {
	return leftOutOf(st.ownedEPs(), listed, epID)
}

// staleUnlisted makes stale, as on network, every endpoint the state file
// owns that listed (the network in use) does not show, and returns how
// many it marked.
func (r *Reconciler) staleUnlisted(st *stateFile, listed []hnslb.Endpoint, network string) int {
	n := 0
	for _, id := range unshownOwned(st, listed) {
		if r.staleEPs[id] != nil {
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
	on := "network " + network
	if network == networkUnknown {
		on = "a network the state file did not record"
	}
	r.staleEPs[id] = &staleObj{reason: "ours, on " + on + ", which hnsproxy no longer uses", network: network}
}

// endpointNetworks are the networks the state file records for the
// endpoints it owns: the one hnsproxy uses, and those where endpoints of
// its are still to be deleted; none (the field left out: not known) while
// one of those is on a network not known.
func (r *Reconciler) endpointNetworks() []string {
	networks := []string{r.opts.NetworkID}
	for _, s := range r.staleEPs {
		if s.network == networkUnknown {
			return nil
		}
		if s.network != "" && !slices.Contains(networks, s.network) {
			networks = append(networks, s.network)
		}
	}
	return networks
}
