package diag

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// writtenElsewhere notes a state file written by an hnsproxy on another
// network than the one diagnosed. The network gone: it was made again
// under its name (a CNI, a reboot) and hnsproxy, which exits when it
// notices and programs the new one at its start, has not yet: what the
// rows say differs is what that start corrects, not the next sync.
// The network there: hnsproxy uses it (another --network-name), or has not
// restarted since its --network-name changed.
func (v *view) writtenElsewhere() []string {
	was := ""
	if v.in.Owned != nil {
		was = v.in.Owned.Network
	}
	if was == "" || strings.EqualFold(was, v.in.Network.ID) {
		return nil
	}
	for _, n := range v.in.HNS.Networks {
		if strings.EqualFold(n.ID, was) {
			return []string{fmt.Sprintf("state file: written by hnsproxy on network %q (%s), not on %q (%s): hnsproxy uses that network (is hnsproxy-diag given the daemon's --network-name or --config?), or has not restarted since its --network-name changed",
				n.Name, was, v.in.Network.Name, v.in.Network.ID)}
		}
	}
	return []string{fmt.Sprintf("state file: written by hnsproxy on network %s, which HNS no longer has; %q is %s now: if that is hnsproxy's network, it was made again since and hnsproxy has not started on it yet. A running hnsproxy exits when it notices (at its next drift repair, or sooner) and its restart programs the new network: what differs below is corrected then, not by a sync before",
		was, v.in.Network.Name, v.in.Network.ID)}
}

// ownedElsewhere notes the endpoints the state file owns on networks other
// than the one diagnosed: hnsproxy's from before it moved to this network
// (another --network-name), which its Start on this one deletes.
func (v *view) ownedElsewhere() []string {
	if v.in.Owned == nil {
		return nil
	}
	count := map[string]int{} // network ID → endpoints of hnsproxy's on it
	for i := range v.in.HNS.Endpoints {
		ep := &v.in.HNS.Endpoints[i]
		if !strings.EqualFold(ep.HostComputeNetwork, v.in.Network.ID) && v.in.Owned.RemoteEndpoint(ep.ID) {
			count[strings.ToLower(ep.HostComputeNetwork)]++
		}
	}
	var out []string
	for _, id := range slices.Sorted(maps.Keys(count)) {
		name := "(a network HNS does not list)"
		for _, n := range v.in.HNS.Networks {
			if strings.EqualFold(n.ID, id) {
				name = fmt.Sprintf("%q", n.Name)
			}
		}
		out = append(out, fmt.Sprintf("state file: %d endpoints of hnsproxy's are on network %s (%s), not on %q: left from before hnsproxy used %q; hnsproxy deletes them when it starts on %q with this state file, and its log says why if a delete fails",
			count[id], name, id, v.in.Network.Name, v.in.Network.Name, v.in.Network.Name))
	}
	return out
}
