package diag

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// heldAddresses explains the wanted remote backends a row lacks whose
// address another endpoint on the diagnosed network holds: HNS keeps one
// endpoint per address on a network (a local and a remote one may share it
// on Windows Server 2019 and 2022), so
// it refuses hnsproxy's remote endpoint there, and hnsproxy deletes no
// endpoint it does not own (its log says "HNS refuses endpoint address").
func (v *view) heldAddresses(bs []Backend) []string {
	var out []string
	for _, b := range bs {
		if b.State != "missing" || b.Local {
			continue
		}
		want, err := netip.ParseAddr(b.IP)
		if err != nil {
			continue
		}
		var held []string
		for _, ep := range v.endpoints {
			if !strings.EqualFold(ep.HostComputeNetwork, v.in.Network.ID) {
				continue // the rule is per network: another's endpoints refuse nothing here
			}
			if v.in.Owned != nil && v.in.Owned.RemoteEndpoint(ep.ID) && ep.IsRemote() {
				continue // hnsproxy's own: it replaces or adopts it
			}
			if ep.HasAddress(want) {
				held = append(held, fmt.Sprintf("%s endpoint %s %q", ep.KindWord(), ep.ID, ep.Name))
			}
		}
		if len(held) > 0 {
			slices.Sort(held)
			out = append(out, fmt.Sprintf("backend %s: HNS has %s on its address, not hnsproxy's; HNS refuses hnsproxy's remote endpoint there, and hnsproxy does not delete another's endpoint (remove it, or wait for the pod's move to reach its EndpointSlice)",
				b.IP, strings.Join(held, ", ")))
		}
	}
	return out
}
