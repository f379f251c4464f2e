package vfp

import (
	"fmt"
	"testing"
)

// TestAffinityHashesTheSourceTheLoadBalancerSees: VFP can hash only the
// packet in front of it. Pods of node b reaching node a's NodePort arrive
// with b's address (their OutBoundNAT), so SourceIP affinity pins all of
// them to one backend, as it would one client.
func TestAffinityHashesTheSourceTheLoadBalancerSees(t *testing.T) {
	a, b := l2bridgeHNS()
	var pods []string
	for i := range 16 {
		pod := fmt.Sprintf("10.244.2.%d", 20+i)
		b.pod(pod)
		pods = append(pods, pod)
	}
	c := mustCluster(t, a.asNode(ipA), b.asNode(ipB))
	backends := map[string]bool{}
	for _, pod := range pods {
		v, err := c.Trace(tcp(pod+":40000", ipA+":30082"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v.Outcome != DeliveredToPod || v.LoadBalancerID != "a-lb10" {
			t.Fatalf("%s: %s", pod, v)
		}
		backends[v.Backend.Addr().String()] = true
	}
	if len(backends) != 1 {
		t.Errorf("pods behind node b's address reached backends %v through a SourceIP load balancer, want one", backends)
	}
}
