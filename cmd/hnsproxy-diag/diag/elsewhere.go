package diag

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

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
