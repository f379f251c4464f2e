package desired

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/intent"
)

// The API server accepted IPv4 addresses with leading zeros for years
// (read as decimal), and objects stored then are still served: a cluster IP,
// an external IP or an ingress IP written "192.168.001.010", an endpoint
// "10.001.0.3". kube-proxy parses every one of them with
// k8s.io/utils/net.ParseIPSloppy (serviceport.go, util.MapIPsByIPFamily,
// endpointslicecache.go) and programs the canonical address; so must the
// mapping, with no problem reported.
func TestLegacyLeadingZeroIPv4IsServedAsKubeProxyReadsIt(t *testing.T) {
	svc := service("web", clusterIPs("10.000.0.001"), nodePorts(30080),
		externalIPs("203.0.113.009"), loadBalancer(ingressIP("198.51.100.020")))
	slices := []*discoveryv1.EndpointSlice{slice("web-1", 8080, ep("10.001.0.3"), ep("10.1.0.2", local))}
	r := ForService(ServiceInput{Service: svc, Slices: slicesOf(slices...)}, config())
	for _, p := range r.Problems {
		t.Errorf("problem reported: %s: %s", p.Reason, p.Message)
	}
	if len(r.ClusterIPs) != 1 || r.ClusterIPs[0] != "10.0.0.1" {
		t.Errorf("cluster IPs %v, want [10.0.0.1]", r.ClusterIPs)
	}
	want := []intent.LBKey{nodePortKey(intent.IPv4, 30080), key("10.0.0.1", 80), key("198.51.100.20", 80), key("203.0.113.9", 80)}
	got := map[intent.LBKey][]intent.Backend{}
	for _, lb := range r.LBs {
		got[lb.Key] = lb.Backends
	}
	for _, k := range want {
		bes, ok := got[k]
		if !ok {
			t.Errorf("no load balancer %s; have %v", k, got)
			continue
		}
		if len(bes) != 2 || bes[0] != localBE("10.1.0.2") || bes[1] != remote("10.1.0.3") {
			t.Errorf("%s: backends %v, want [10.1.0.2 (local) 10.1.0.3]", k, bes)
		}
	}
	if len(r.LBs) != len(want) {
		t.Errorf("%d load balancers %v, want %d", len(r.LBs), got, len(want))
	}
}
