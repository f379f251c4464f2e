package desired

import (
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
)

// TestAFamilyTheNodeCannotCarryIsNoWarning: a dual-stack cluster's
// Windows nodes on overlay (Flannel's and Calico's VXLAN, which carry
// IPv4 alone), or on HNS without IPv6, are single-stack by their network:
// their pods have no IPv6 address to reach an IPv6 cluster IP with, and
// nothing on the node can change that. Not serving it is a Normal node
// cause, not a Warning that would keep the node-cause alert firing on a
// healthy cluster for as long as it has a dual-stack Service. A family the
// node could serve but for its addresses (an overlay node without an IPv4
// address, IPv6 node ports while the Node lists no IPv6 address) stays a
// Warning: kubelet's --node-ip fixes it.
func TestAFamilyTheNodeCannotCarryIsNoWarning(t *testing.T) {
	ipv4Only := func(c *Config) { delete(c.NodeIPs, intent.IPv6) }
	dual := clusterIPs("10.0.0.1", "fd00:96::1")
	for _, tc := range []struct {
		name      string
		cfg       []func(*Config)
		ips       svcOpt
		warning   bool
		causeSays string
	}{
		{"overlay node, IPv4 address only", []func(*Config){overlay, ipv4Only}, dual, false, "overlay networks do not support IPv6"},
		{"overlay node with an IPv6 address too", []func(*Config){overlay}, dual, false, "overlay networks do not support IPv6"},
		{"l2bridge on HNS without IPv6", []func(*Config){oldHNS}, dual, false, "does not support IPv6"},
		{"overlay node without an IPv4 address", []func(*Config){overlay, func(c *Config) { delete(c.NodeIPs, intent.IPv4) }}, clusterIPs("10.0.0.1"), true, "no IPv4 address"},
		{"l2bridge IPv6 node ports, the Node listing no IPv6 address", []func(*Config){ipv4Only}, dual, true, "node ports are not served in IPv6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config()
			for _, f := range tc.cfg {
				f(&cfg)
			}
			res := ForService(ServiceInput{Service: service("web", tc.ips, nodePorts(30080)), Slices: slicesOf(dualStackSlices()...)}, cfg)
			var family []Problem
			for _, p := range res.Problems {
				if p.Reason == ReasonIPFamilyUnsupported {
					family = append(family, p)
				}
			}
			if len(family) != 1 {
				t.Fatalf("IPFamilyUnsupported problems %+v, want one", family)
			}
			if p := family[0]; p.Warning != tc.warning || !strings.Contains(p.NodeCause, tc.causeSays) {
				t.Errorf("problem %+v: want Warning %v and a node cause saying %q", p, tc.warning, tc.causeSays)
			}
		})
	}
}
