package vfp

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestHealthCheckVIPForwardedFromTheWire: with --forward-healthcheck-vip,
// winkernel adds for each ingress IP a load balancer from
// ingressIP:healthPort to the node's gateway endpoint, without
// VipExternalIP (and without DSR; UseMux and PreserveDIP under
// preserve-destination). Its purpose is the cloud load balancer's probe,
// which arrives from the wire addressed to the ingress IP
// (kubernetes/kubernetes#99287: "Google LB -> [lb:12345 to lb_vip:10256]
// -> Node"). So a VIP frontend that the node's external load balancers
// also carry must match wire traffic on every port, whatever that load
// balancer's own flags; only a VIP no external load balancer carries (a
// ClusterIP) stays unreachable from outside.
func TestHealthCheckVIPForwardedFromTheWire(t *testing.T) {
	const gateway = "10.244.1.2" // flannel's cbr0_ep, the host's endpoint on the pod network
	ext := hnslb.PortMappingFlagsVipExternalIP
	mux := hnslb.PortMappingFlagsUseMux | hnslb.PortMappingFlagsPreserveDIP
	a := newHNS(nodeA, hnslb.NetworkTypeL2Bridge, "10.244.1.0/24", 0)
	a.pod(podA1)
	a.pod(gateway)
	// externalTrafficPolicy Local: DSR to the local backend, health checks
	// on the Service's health-check node port.
	a.lb(lbSpec{vip: "192.0.2.50", ext: 80, int: 8080, backends: []string{podA1}, flags: hnslb.LoadBalancerFlagsDSR, portFlags: ext})
	a.lb(lbSpec{vip: "192.0.2.50", ext: 32000, int: 32000, sourceVIP: ipA, backends: []string{gateway}})
	// preserve-destination: the health-check load balancer carries the mux flags.
	a.lb(lbSpec{vip: "192.0.2.51", ext: 80, int: 8080, backends: []string{podA1}, flags: hnslb.LoadBalancerFlagsDSR, portFlags: ext | mux})
	a.lb(lbSpec{vip: "192.0.2.51", ext: 10256, int: 10256, sourceVIP: ipA, backends: []string{gateway}, portFlags: mux})
	a.lb(lbSpec{vip: "10.96.0.10", ext: 80, int: 8080, backends: []string{podA1}})
	c := mustCluster(t, a.asNode(ipA))
	onA := Options{Ingress: nodeA}
	runFlows(t, c, "", "", []flow{
		{name: "probe on the health-check node port reaches the gateway endpoint", pkt: tcp(client+":5555", "192.0.2.50:32000"), opt: onA,
			want: want{outcome: DeliveredToPod, lb: "a-lb2", backend: gateway + ":32000", src: ipA + ":5555", dst: gateway + ":32000"}},
		{name: "probe under preserve-destination keeps the ingress IP", pkt: tcp(client+":5555", "192.0.2.51:10256"), opt: onA,
			want: want{outcome: DeliveredToPod, lb: "a-lb4", backend: gateway + ":10256", src: ipA + ":5555", dst: "192.0.2.51:10256"}},
		{name: "the Service itself still keeps the client IP", pkt: tcp(client+":5555", "192.0.2.50:80"), opt: onA,
			want: want{outcome: DeliveredToPod, lb: "a-lb1", backend: podA1 + ":8080", src: client + ":5555", dsr: true, keepsIP: true}},
		{name: "ClusterIP is still not reachable from outside the node", pkt: tcp(client+":5555", "10.96.0.10:80"), opt: onA,
			want: want{outcome: Dropped, reason: "no load balancer matched"}},
	})
}
