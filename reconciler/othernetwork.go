package reconciler

import (
	"context"
	"fmt"
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
// gone lists nothing, as hcn's filtered query answers.

// staleElsewhere owns, as stale, the endpoints the state file owns on the
// networks it recorded other than the one hnsproxy uses now. A listing
// error fails Start, which is retried.
func (r *Reconciler) staleElsewhere(ctx context.Context, st *stateFile, ownedEP map[string]struct{}) error {
	for _, network := range st.Networks {
		if strings.EqualFold(network, r.opts.NetworkID) {
			continue
		}
		eps, err := r.client.ListEndpointsOfNetwork(ctx, network)
		if err != nil && !hnslb.IsNotFound(err) {
			return fmt.Errorf("reconciler start: list endpoints of network %q, where the state file has endpoints of hnsproxy's: %w", network, err)
		}
		n := 0
		for _, ep := range eps {
			if _, ours := ownedEP[strings.ToLower(ep.ID)]; !ours || !strings.EqualFold(ep.HostComputeNetwork, network) {
				continue
			}
			r.ownedEPs[ep.ID] = struct{}{}
			r.staleEPs[ep.ID] = &staleObj{reason: "ours, on network " + network + ", which hnsproxy no longer uses", network: network}
			n++
		}
		if n > 0 {
			r.log.Info("Deleting endpoints of hnsproxy's on a network it no longer uses", "network", network, "endpoints", n, "networkNow", r.opts.NetworkID)
		}
	}
	return nil
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
