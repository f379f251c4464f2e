package vfp

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestAFrontendVIPWinsOverANodePort: an externalIP equal to a node address
// and a NodePort on the same port both match a packet to that address; the
// VIP load balancer is the more specific and applies (docs/vfp.md, "A
// frontend VIP match wins over a NodePort match"), whichever HNS lists first.
func TestAFrontendVIPWinsOverANodePort(t *testing.T) {
	ext := hnslb.PortMappingFlagsVipExternalIP
	for _, nodePortFirst := range []bool{true, false} {
		a := newHNS(nodeA, hnslb.NetworkTypeL2Bridge, "10.244.1.0/24", 0)
		a.pod(podA1)
		a.pod(podA2)
		nodePort := lbSpec{ext: 30090, int: 8080, backends: []string{podA1}, sourceVIP: ipA, portFlags: hnslb.PortMappingFlagsLocalRoutedVIP | ext}
		vip := lbSpec{vip: ipA, ext: 30090, int: 9090, backends: []string{podA2}, sourceVIP: ipA, portFlags: ext}
		var vipLB string
		if nodePortFirst {
			a.lb(nodePort)
			vipLB = a.lb(vip)
		} else {
			vipLB = a.lb(vip)
			a.lb(nodePort)
		}
		c := mustCluster(t, a.asNode(ipA))
		for _, pkt := range []Packet{tcp(podA1+":40000", ipA+":30090"), tcp(client+":40000", ipA+":30090")} {
			v, err := c.Trace(pkt, Options{})
			if err != nil {
				t.Fatalf("Trace(%s): %v", pkt, err)
			}
			if v.LoadBalancerID != vipLB || v.NodePort || v.Backend != ap(podA2+":9090") {
				t.Errorf("NodePort listed first %v: %s met %s; want the VIP load balancer %s to %s:9090", nodePortFirst, pkt, v, vipLB, podA2)
			}
		}
	}
}
