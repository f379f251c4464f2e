package proxier

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// TestStickyClientWhoseBackendLeaves: packet traces of ClientIP affinity
// while the Service's pods come and go, where HNS replaces load balancers
// (ws2022, l2bridge and overlay) and where it modifies them (ws2025). A pod
// and an external client at a node port each stick to one backend; when
// that backend leaves, the next connections of the same client, from any
// source port, go to one of the backends left, the same one each time, and
// none is dropped; when it comes back the client sticks again to one
// backend. Which backend it sticks to after a change is the hash's choice
// (vfp.md): whether real VFP keeps a client whose backend stays on it
// across a change of the backend set is not published, so it is not
// asserted.
func TestStickyClientWhoseBackendLeaves(t *testing.T) {
	const vip, nodePort = "10.96.1.75", 30075
	pods := map[string]string{pod1a: "win-1", pod1b: "win-1", pod2a: "win-2"}
	sticky := service("sticky", vip, func(s *v1.Service) {
		s.Spec.Type = v1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = nodePort
		s.Spec.SessionAffinity = v1.ServiceAffinityClientIP
	})
	backendsOf := func(ips ...string) *discoveryv1.EndpointSlice {
		var eps []discoveryv1.Endpoint
		for _, ip := range ips {
			eps = append(eps, readyEP(ip, pods[ip]))
		}
		return sliceOf("sticky", "sticky-1", discoveryv1.AddressTypeIPv4, eps...)
	}
	clients := []struct {
		name, from, to, ingress string
	}{
		{"a pod at the cluster IP", pod3a, fmt.Sprintf("%s:80", vip), ""},
		{"an external client at the node port", extClient, fmt.Sprintf("%s:%d", ip3, nodePort), "win-3"},
	}
	for _, v := range conformanceVariants {
		t.Run(v.profile+"/"+string(v.mode), func(t *testing.T) {
			c := newSimCluster(t, clusterSpec{profile: v.profile, mode: v.mode, nodes: threeNodes()})
			all := []string{pod1a, pod1b, pod2a}
			c.apply(sticky, backendsOf(all...))
			c.converge()
			for _, cl := range clients {
				// pinnedTo traces the client from many source ports and
				// returns the one backend they all reached, one of want.
				pinnedTo := func(when string, want []string) string {
					t.Helper()
					var reach []string
					for _, ip := range want {
						reach = append(reach, at(ip, 8080))
					}
					p := probe{from: cl.from, to: cl.to, ingress: cl.ingress, reach: reach, pinned: true}
					vc := c.vfp()
					if err := c.checkProbe(vc, p); err != nil {
						t.Fatalf("%s, %s: %v", cl.name, when, err)
					}
					pkt := vfp.Packet{Src: netip.AddrPortFrom(c.addr(cl.from), 40000), Dst: netip.MustParseAddrPort(cl.to), Protocol: hnslb.ProtocolTCP}
					verdict, err := vc.Trace(pkt, vfp.Options{Ingress: cl.ingress})
					if err != nil {
						t.Fatal(err)
					}
					return verdict.Backend.Addr().String()
				}
				first := pinnedTo("with three backends", all)
				left := slices.DeleteFunc(slices.Clone(all), func(ip string) bool { return ip == first })
				c.apply(backendsOf(left...))
				c.converge()
				if again := pinnedTo("after its backend "+first+" left", left); again == first {
					t.Fatalf("%s still reaches %s after it left", cl.name, first)
				}
				c.apply(backendsOf(all...))
				c.converge()
				pinnedTo("after "+first+" came back", all)
			}
		})
	}
}
