//go:build linux

package main

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// The verifier expects, for each node's HNS build, what hnsproxy decides
// for it: the backend cap (64 below 17763.2746, kubernetes#98680; 64 on a
// build that enforces it, once learned), DSR off where KB5005619's
// pod-to-Service bug is worked around on l2bridge, and NodePort load
// balancers over local endpoints where Windows Server 2022's overlay
// NodePort bug is.
func TestProfileExpectation(t *testing.T) {
	saved := clusterSpec
	saved.Nodes = slices.Clone(clusterSpec.Nodes)
	t.Cleanup(func() { clusterSpec = saved })
	const pods = 40 // per node: 80 backends, over the 64 cap
	cases := []struct {
		profile   string
		backends  int
		dsrOnL2   bool
		localOnly bool // overlay NodePort: only win-a's own pods
	}{
		{sim.ProfileWS2019, 64, true, false},
		{sim.ProfileWS2019Lifted, 2 * pods, true, false},
		{sim.ProfileWS2022, 2 * pods, true, false}, // bugs fixed: the rig runs it with --os-bug-workarounds=none
		{sim.ProfileWS2022RTM, 2 * pods, true, true},
		{sim.ProfileWS2022KB, 2 * pods, false, true},
		{sim.ProfileWS2022Cap64, 64, true, false},
		{sim.ProfileWS2025Mod4, 2 * pods, true, false},
		{sim.ProfileWS2025, 2 * pods, true, false},
	}
	for _, network := range []string{framework.NetworkL2Bridge, framework.NetworkOverlay} {
		for _, c := range cases {
			t.Run(network+"/"+c.profile, func(t *testing.T) {
				if err := errors.Join(useNetwork(network), useProfiles(c.profile+","+sim.ProfileWS2025)); err != nil {
					t.Fatal(err)
				}
				p, err := sim.ProfileByName(c.profile)
				if err != nil {
					t.Fatal(err)
				}
				a := clusterSpec.Nodes[0]
				ns := settingsOf(a, 10256, p.Version, p.OSBuild)
				node, svc, slice := bigService(pods)
				want := computeExpected([]corev1.Service{svc}, []discoveryv1.EndpointSlice{slice}, node, ns)
				var clusterIP, nodePort *intent.LB
				for _, lb := range want.LBs {
					switch lb.Origin {
					case intent.OriginClusterIP:
						clusterIP = lb
					case intent.OriginNodePort:
						nodePort = lb
					}
				}
				if clusterIP == nil || nodePort == nil {
					t.Fatalf("load balancers %v: want a cluster IP's and a node port's", want.LBs)
				}
				if got := len(clusterIP.Backends); got != c.backends {
					t.Errorf("cluster IP load balancer: %d backends, want %d", got, c.backends)
				}
				dsr := clusterIP.Flags&hnslb.LoadBalancerFlagsDSR != 0
				if wantDSR := c.dsrOnL2 || network == framework.NetworkOverlay; dsr != wantDSR {
					t.Errorf("cluster IP load balancer DSR %v, want %v", dsr, wantDSR)
				}
				local := !slices.ContainsFunc(nodePort.Backends, func(b intent.Backend) bool { return !b.Local })
				if wantLocal := c.localOnly && network == framework.NetworkOverlay; local != wantLocal {
					t.Errorf("node port load balancer over local endpoints only: %v, want %v (%d backends)", local, wantLocal, len(nodePort.Backends))
				}
			})
		}
	}
}

// bigService is win-a's Node and a NodePort Service over n ready pods on
// each node.
func bigService(n int) (*corev1.Node, corev1.Service, discoveryv1.EndpointSlice) {
	a, b := clusterSpec.Nodes[0], clusterSpec.Nodes[1]
	node := nodeOf(a)
	svc := corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: soakNamespace, Name: "big-0"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.0.30", ClusterIPs: []string{"10.96.0.30"},
			Ports: []corev1.ServicePort{{Name: "p0", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}}}}
	slice := discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: soakNamespace, Name: "big-0-a", Labels: map[string]string{discoveryv1.LabelServiceName: "big-0"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("p0"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080)}},
	}
	for i := range n {
		for j, spec := range []framework.NodeSpec{a, b} {
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
				Addresses:  []string{fmt.Sprintf("10.244.%d.%d", j+1, 10+i)},
				NodeName:   ptr.To(spec.Name),
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			})
		}
	}
	return node, svc, slice
}

func TestUseProfilesRefusesBadLists(t *testing.T) {
	saved := clusterSpec
	saved.Nodes = slices.Clone(clusterSpec.Nodes)
	t.Cleanup(func() { clusterSpec = saved })
	for _, list := range []string{"ws2019", "ws2019,ws2022,ws2025", "ws2019,ws2003", ""} {
		if err := useProfiles(list); err == nil {
			t.Errorf("useProfiles(%q) accepted it", list)
		}
	}
	if err := useProfiles("ws2019, ws2022-cap64"); err != nil {
		t.Fatal(err)
	}
	if got := profileList(); got != "ws2019,ws2022-cap64" {
		t.Errorf("profiles %q after useProfiles", got)
	}
	if !bigServicesWanted() {
		t.Error("a run with 64-capped HNSes has no Service over 64 pods")
	}
	if err := useProfiles(saved.Nodes[0].Profile + "," + saved.Nodes[1].Profile); err != nil || bigServicesWanted() {
		t.Errorf("the default profiles: err %v, big Services %v, want none", err, bigServicesWanted())
	}
}
