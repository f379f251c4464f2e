package proxier

import (
	"reflect"
	"sort"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// kubeDNS is the kube-dns Service as kubeadm's CoreDNS add-on makes it:
// dns 53/UDP, dns-tcp 53/TCP and metrics 9153/TCP on one ClusterIP
// (kubernetes/kubernetes cmd/kubeadm/app/phases/addons/dns/manifests.go).
func kubeDNS() *v1.Service {
	return service("kube-dns", "10.96.0.10", func(s *v1.Service) {
		s.Spec.Ports = []v1.ServicePort{
			{Name: "dns", Protocol: v1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(53)},
			{Name: "dns-tcp", Protocol: v1.ProtocolTCP, Port: 53, TargetPort: intstr.FromInt32(53)},
			{Name: "metrics", Protocol: v1.ProtocolTCP, Port: 9153, TargetPort: intstr.FromInt32(9153)},
		}
	})
}

// kubeDNSSlice is kube-dns's EndpointSlice with the CoreDNS pods given.
func kubeDNSSlice(eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	s := sliceOf("kube-dns", "kube-dns-abc", discoveryv1.AddressTypeIPv4, eps...)
	s.Ports = []discoveryv1.EndpointPort{
		{Name: ptr.To("dns"), Port: ptr.To[int32](53), Protocol: ptr.To(v1.ProtocolUDP)},
		{Name: ptr.To("dns-tcp"), Port: ptr.To[int32](53), Protocol: ptr.To(v1.ProtocolTCP)},
		{Name: ptr.To("metrics"), Port: ptr.To[int32](9153), Protocol: ptr.To(v1.ProtocolTCP)},
	}
	return s
}

// dnsBackends maps each of kube-dns's load balancers (by protocol and
// port) to its backend IPs.
func (n *testNode) dnsBackends() map[string][]string {
	snap := n.hns.Snapshot()
	ips := endpointIPs(snap)
	out := map[string][]string{}
	for _, lb := range snap.LoadBalancers {
		if len(lb.FrontendVIPs) == 0 || lb.FrontendVIPs[0] != "10.96.0.10" || len(lb.PortMappings) == 0 {
			continue
		}
		pm := lb.PortMappings[0]
		proto := "tcp/"
		if pm.Protocol == hnslb.ProtocolUDP {
			proto = "udp/"
		}
		out[proto+strconv.Itoa(int(pm.ExternalPort))] = backendIPs(lb, ips)
	}
	return out
}

// allDNS is every kube-dns load balancer with backends ips.
func allDNS(ips ...string) map[string][]string {
	ips = append([]string(nil), ips...)
	sort.Strings(ips)
	return map[string][]string{"udp/53": ips, "tcp/53": ips, "tcp/9153": ips}
}

// TestClusterDNSRollout: CoreDNS (two replicas on Linux nodes) rolled and
// drained as operators do; each step's load balancers carry exactly the
// backends kube-proxy would pick, with the fewest writes, and one
// protocol's trouble leaves the other served.
func TestClusterDNSRollout(t *testing.T) {
	for _, tc := range []struct {
		profile string
		// rolloutWrites: the new pod's remote endpoint, each load balancer
		// modified (or deleted and created where HNS cannot modify), the
		// old pod's remote endpoint deleted.
		rolloutWrites int
	}{
		{"ws2022", 1 + 3*2 + 1},
		{"ws2025", 1 + 3 + 1},
	} {
		profile := tc.profile
		t.Run(profile, func(t *testing.T) {
			const a, b, c, d = "10.244.5.10", "10.244.6.10", "10.244.5.11", "10.244.6.11"
			n := newTestNode(t, profile)
			n.start()
			n.apply(kubeDNS(), kubeDNSSlice(readyEP(a, "linux-1"), readyEP(b, "linux-2")))
			n.eventually("kube-dns programmed", func() bool { return reflect.DeepEqual(n.dnsBackends(), allDNS(a, b)) })
			n.settle()

			n.hns.ResetCounters()
			// Rolling update: c ready, a terminating but still serving.
			n.apply(kubeDNSSlice(terminatingEP(a, "linux-1", true), readyEP(b, "linux-2"), readyEP(c, "linux-1")))
			n.eventually("rollout step", func() bool { return reflect.DeepEqual(n.dnsBackends(), allDNS(b, c)) })
			n.settle()
			if w := n.hns.Counters().Writes(); w != tc.rolloutWrites {
				t.Errorf("rollout step: %d writes, want %d (%+v)", w, tc.rolloutWrites, n.hns.Counters().Calls)
			}
			if got := n.remoteEndpointIPs(); !reflect.DeepEqual(got, allDNS(b, c)["udp/53"]) {
				t.Errorf("remote endpoints %v, want %v", got, allDNS(b, c)["udp/53"])
			}
			n.hns.ResetCounters()
			// a gone: nothing to write.
			n.apply(kubeDNSSlice(readyEP(b, "linux-2"), readyEP(c, "linux-1")))
			n.settle()
			if w := n.hns.Counters().Writes(); w != 0 {
				t.Errorf("terminating endpoint gone: %d writes, want 0 (%+v)", w, n.hns.Counters().Calls)
			}

			// A drain of both nodes: no ready endpoint, both still serving.
			n.apply(kubeDNSSlice(terminatingEP(b, "linux-2", true), terminatingEP(c, "linux-1", true)))
			n.settle()
			if got := n.dnsBackends(); !reflect.DeepEqual(got, allDNS(b, c)) {
				t.Errorf("all terminating: %v, want the serving-terminating ones", got)
			}
			n.apply(kubeDNSSlice(terminatingEP(b, "linux-2", true), terminatingEP(c, "linux-1", true), readyEP(d, "linux-3")))
			n.eventually("new replica", func() bool { return reflect.DeepEqual(n.dnsBackends(), allDNS(d)) })

			// The UDP frontend refused: TCP keeps being served and updated.
			n.settle()
			n.hns.SetFaults(sim.Faults{TakenPorts: []sim.TakenPort{{Protocol: hnslb.ProtocolUDP, Port: 53}}})
			n.apply(kubeDNSSlice(readyEP(d, "linux-3"), readyEP(a, "linux-1")))
			n.eventually("tcp updated beside a refused udp", func() bool {
				got := n.dnsBackends()
				return reflect.DeepEqual(got["tcp/53"], []string{a, d}) && reflect.DeepEqual(got["tcp/9153"], []string{a, d})
			})
			n.hns.SetFaults(sim.Faults{})
			n.eventually("udp follows", func() bool { return reflect.DeepEqual(n.dnsBackends(), allDNS(a, d)) })
		})
	}
}
