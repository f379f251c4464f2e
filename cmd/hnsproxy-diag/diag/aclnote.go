package diag

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// aclNotes says which local endpoints the packet left or reached carry ACL
// policies. A network policy agent (Calico's felix, Azure's NPM) writes
// them onto the pods' endpoints; the trace follows load balancers and
// routes only (vfp does not model ACLs), so a packet they drop would
// otherwise read as delivered.
func (v *view) aclNotes(src netip.Addr, verdict vfp.Verdict, names *strings.Replacer) []string {
	var out []string
	note := func(ep *hnslb.Endpoint, dir string) {
		if n := aclCount(ep); n > 0 {
			out = append(out, fmt.Sprintf("%s (%s) carries %d ACL policies, which a network policy agent programs; not evaluated by this trace: they may still drop the packet %s",
				names.Replace(ep.ID), ep.IP(), n, dir))
		}
	}
	for _, ep := range v.endpoints {
		if !ep.IsRemote() && holdsAddr(ep, src) {
			note(ep, "as it leaves")
		}
	}
	if verdict.Outcome == vfp.DeliveredToPod {
		if ep := v.endpoints[strings.ToLower(verdict.BackendEndpointID)]; ep != nil {
			note(ep, "as it arrives")
		}
	}
	return out
}

func aclCount(ep *hnslb.Endpoint) int {
	n := 0
	for _, p := range ep.Policies {
		if strings.EqualFold(string(p.Type), string(hnslb.EndpointPolicyACL)) {
			n++
		}
	}
	return n
}

// holdsAddr says whether ep has the address ip.
func holdsAddr(ep *hnslb.Endpoint, ip netip.Addr) bool {
	for _, c := range ep.IpConfigurations {
		if a, err := netip.ParseAddr(c.IpAddress); err == nil && a.Unmap() == ip {
			return true
		}
	}
	return false
}
