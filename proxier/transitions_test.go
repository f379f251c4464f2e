package proxier

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// transitionStep is one change made through the API, after which the HNS
// state must equal what a fresh node computes from the same objects.
type transitionStep struct {
	name string
	do   func(n *testNode)
}

func deleteService(name string) func(*testNode) {
	return func(n *testNode) {
		if err := n.client.CoreV1().Services("default").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			n.t.Fatal(err)
		}
	}
}

func deleteSlice(name string) func(*testNode) {
	return func(n *testNode) {
		if err := n.client.DiscoveryV1().EndpointSlices("default").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			n.t.Fatal(err)
		}
	}
}

// freshView starts a second node (same profile, local pods, Node) on the
// objects n's API holds now, and returns its converged load balancers (as
// sorted text) and remote endpoints.
func freshView(t *testing.T, n *testNode, localPods []string) ([]string, []string) {
	t.Helper()
	f := newTestNode(t, n.hns.Profile().Name, localPods...)
	ctx := context.Background()
	node, err := n.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node = node.DeepCopy()
	node.ResourceVersion = ""
	if _, err := f.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	svcs, _ := n.client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	for i := range svcs.Items {
		s := svcs.Items[i].DeepCopy()
		s.ResourceVersion = ""
		f.apply(s)
	}
	sls, _ := n.client.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
	for i := range sls.Items {
		s := sls.Items[i].DeepCopy()
		s.ResourceVersion = ""
		f.apply(s)
	}
	f.start()
	f.settle()
	defer f.stop()
	return sortedViews(f.lbs()), f.remoteEndpointIPs()
}

// Frontends two Services want, handed from one to the other as they change
// (updates are delete + create on ws2022).
func TestConflictTransitionsLeaveNothingStale(t *testing.T) {
	pods := []string{"10.244.1.5", "10.244.1.6"}
	a := func(m ...func(*v1.Service)) *v1.Service { return service("a", "10.96.0.10", m...) }
	b := func(m ...func(*v1.Service)) *v1.Service {
		s := service("b", "10.96.0.11", m...)
		s.CreationTimestamp = metav1.NewTime(s.CreationTimestamp.Add(time.Hour))
		return s
	}
	ext := func(ip string) func(*v1.Service) { return func(s *v1.Service) { s.Spec.ExternalIPs = []string{ip} } }
	np := func(p int32) func(*v1.Service) {
		return func(s *v1.Service) { s.Spec.Type = v1.ServiceTypeNodePort; s.Spec.Ports[0].NodePort = p }
	}
	ing := func(ip string) func(*v1.Service) {
		return func(s *v1.Service) {
			s.Spec.Type = v1.ServiceTypeLoadBalancer
			s.Spec.Ports[0].NodePort = 30090
			s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: ip}}
		}
	}
	steps := []transitionStep{
		{"both", func(n *testNode) {
			n.apply(slice("a", endpoint{"10.244.1.5", nodeName}), slice("b", endpoint{"10.244.1.6", nodeName}), a(ext("192.0.2.20")), b(ext("192.0.2.20")))
		}},
		{"a drops ext", func(n *testNode) { n.apply(a()) }},
		{"a takes it back", func(n *testNode) { n.apply(a(ext("192.0.2.20"))) }},
		{"a deleted", deleteService("a")},
		{"a back, nodeport", func(n *testNode) { n.apply(a(np(30080))) }},
		{"b same nodeport", func(n *testNode) { n.apply(b(np(30080))) }},
		{"a nodeport changed", func(n *testNode) { n.apply(a(np(30081))) }},
		{"b ingress = a's external", func(n *testNode) { n.apply(a(ext("192.0.2.30")), b(ing("192.0.2.30"))) }},
		{"a slice empty", func(n *testNode) { n.apply(slice("a")) }},
		{"a slice back", func(n *testNode) { n.apply(slice("a", endpoint{"10.244.2.9", "win-2"})) }},
		{"b ingress cluster IP of a", func(n *testNode) { n.apply(b(ing("10.96.0.10"))) }},
		{"a deleted again", deleteService("a")},
	}
	runTransitions(t, newTestNode(t, "ws2022", pods...), pods, steps)
}

// runTransitions applies each step to n and checks, after it, that n's HNS
// holds what a fresh node computes from the same objects: nothing stale, nothing missing.
func runTransitions(t *testing.T, n *testNode, pods []string, steps []transitionStep) {
	t.Helper()
	n.start()
	for i, st := range steps {
		st.do(n)
		n.settle()
		got, gotEPs := sortedViews(n.lbs()), n.remoteEndpointIPs()
		want, wantEPs := freshView(t, n, pods)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotEPs, wantEPs) {
			t.Fatalf("step %d %q:\nincremental %s %v\nfresh       %s %v", i, st.name, fmt.Sprintf("%+v", got), gotEPs, fmt.Sprintf("%+v", want), wantEPs)
		}
	}
}

// One Service through type, port, protocol, policy and slice changes, its
// slices before it and after it.
func TestServiceTransitionsLeaveNothingStale(t *testing.T) {
	pods := []string{"10.244.1.5", "10.244.1.6"}
	local, remote := endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.7", "win-2"}
	svc := func(m ...func(*v1.Service)) *v1.Service { return service("web", "10.96.0.10", m...) }
	nodePort := func(s *v1.Service) {
		s.Spec.Type = v1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = 30080
	}
	lb := func(s *v1.Service) {
		s.Spec.Type = v1.ServiceTypeLoadBalancer
		s.Spec.Ports[0].NodePort = 30080
		s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: "192.0.2.10"}}
	}
	steps := []transitionStep{
		{"slice before service", func(n *testNode) { n.apply(slice("web", local, remote)) }},
		{"clusterIP", func(n *testNode) { n.apply(svc()) }},
		{"nodePort", func(n *testNode) { n.apply(svc(nodePort)) }},
		{"nodePort changed", func(n *testNode) {
			n.apply(svc(nodePort, func(s *v1.Service) { s.Spec.Ports[0].NodePort = 30081 }))
		}},
		{"loadBalancer", func(n *testNode) { n.apply(svc(lb)) }},
		{"ingress ipMode Proxy", func(n *testNode) {
			n.apply(svc(lb, func(s *v1.Service) { s.Status.LoadBalancer.Ingress[0].IPMode = ptr.To(v1.LoadBalancerIPModeProxy) }))
		}},
		{"ETP Local", func(n *testNode) {
			n.apply(svc(lb, func(s *v1.Service) {
				s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
				s.Spec.HealthCheckNodePort = 32000
			}))
		}},
		{"no node ports", func(n *testNode) {
			n.apply(svc(lb, func(s *v1.Service) {
				s.Spec.AllocateLoadBalancerNodePorts = ptr.To(false)
				s.Spec.Ports[0].NodePort = 0
			}))
		}},
		{"externalIPs", func(n *testNode) {
			n.apply(svc(func(s *v1.Service) { s.Spec.ExternalIPs = []string{"192.0.2.20", "192.0.2.21"} }))
		}},
		{"one externalIP removed", func(n *testNode) {
			n.apply(svc(func(s *v1.Service) { s.Spec.ExternalIPs = []string{"192.0.2.21"} }))
		}},
		{"port renamed", func(n *testNode) {
			n.apply(svc(func(s *v1.Service) { s.Spec.Ports[0].Name = "web" }))
		}},
		{"slice follows rename", func(n *testNode) {
			s := slice("web", local, remote)
			s.Ports[0].Name = ptr.To("web")
			n.apply(s)
		}},
		{"protocol UDP", func(n *testNode) {
			n.apply(svc(func(s *v1.Service) { s.Spec.Ports[0].Name, s.Spec.Ports[0].Protocol = "web", v1.ProtocolUDP }))
		}},
		{"slice UDP", func(n *testNode) {
			s := slice("web", local, remote)
			s.Ports[0].Name, s.Ports[0].Protocol = ptr.To("web"), ptr.To(v1.ProtocolUDP)
			n.apply(s)
		}},
		{"SCTP", func(n *testNode) {
			n.apply(svc(func(s *v1.Service) { s.Spec.Ports[0].Name, s.Spec.Ports[0].Protocol = "web", v1.ProtocolSCTP }))
		}},
		{"ITP Local", func(n *testNode) {
			n.apply(svc(func(s *v1.Service) {
				s.Spec.Ports[0].Name, s.Spec.Ports[0].Protocol = "web", v1.ProtocolUDP
				s.Spec.InternalTrafficPolicy = ptr.To(v1.ServiceInternalTrafficPolicyLocal)
			}))
		}},
		{"only remote endpoints", func(n *testNode) {
			s := slice("web", remote)
			s.Ports[0].Name, s.Ports[0].Protocol = ptr.To("web"), ptr.To(v1.ProtocolUDP)
			n.apply(s)
		}},
		{"nil conditions", func(n *testNode) {
			s := slice("web", local, remote)
			s.Ports[0].Name, s.Ports[0].Protocol = ptr.To("web"), ptr.To(v1.ProtocolUDP)
			for i := range s.Endpoints {
				s.Endpoints[i].Conditions = discoveryv1.EndpointConditions{}
			}
			n.apply(s)
		}},
		{"externalName", func(n *testNode) {
			n.apply(svc(func(s *v1.Service) {
				s.Spec.Type, s.Spec.ExternalName = v1.ServiceTypeExternalName, "example.com"
				s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies = "", nil, nil
			}))
		}},
		{"back to clusterIP", func(n *testNode) { n.apply(svc()) }},
		{"FQDN slice", func(n *testNode) {
			s := slice("web", local)
			s.Name, s.AddressType = "web-fqdn", discoveryv1.AddressTypeFQDN
			s.Endpoints[0].Addresses = []string{"a.example.com"}
			n.apply(s)
		}},
		{"second slice", func(n *testNode) {
			s := slice("web", endpoint{"10.244.1.6", nodeName})
			s.Name = "web-2"
			n.apply(s)
		}},
		{"service deleted before slices", deleteService("web")},
		{"slice deleted", deleteSlice("web-abc")},
		{"service back", func(n *testNode) { n.apply(svc()) }},
	}
	runTransitions(t, newTestNode(t, "ws2025", pods...), pods, steps)
}

// A Service gaining and losing its IPv6 family on a dual-stack node.
func TestDualStackTransitionsLeaveNothingStale(t *testing.T) {
	pods := []string{"10.244.1.5"}
	n := newTestNode(t, "ws2025", pods...)
	runTransitions(t, n, pods, dualStackSteps(n))
}

// dualStackSteps gives n's Node an IPv6 address and returns one Service's
// changes between single-stack and dual-stack, with external and ingress
// IPs and a node port of each family, and its IPv6 slice emptied and back.
func dualStackSteps(n *testNode) []transitionStep {
	ctx := context.Background()
	node, _ := n.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	node.Status.Addresses = append(node.Status.Addresses, v1.NodeAddress{Type: v1.NodeInternalIP, Address: "fd00::1"})
	if _, err := n.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		n.t.Fatal(err)
	}
	v6 := func(s *v1.Service) {
		s.Spec.ClusterIPs = []string{"10.96.0.10", "fd00:10:96::10"}
		s.Spec.IPFamilies = []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol}
		s.Spec.IPFamilyPolicy = ptr.To(v1.IPFamilyPolicyPreferDualStack)
	}
	v6slice := func(ips ...string) *discoveryv1.EndpointSlice {
		s := slice("web")
		s.Name, s.AddressType = "web-v6", discoveryv1.AddressTypeIPv6
		for _, ip := range ips {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, NodeName: ptr.To("win-2")})
		}
		return s
	}
	np := func(s *v1.Service) {
		s.Spec.Type = v1.ServiceTypeLoadBalancer
		s.Spec.Ports[0].NodePort = 30080
		s.Spec.ExternalIPs = []string{"192.0.2.9", "2001:db8::9"}
		s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: "192.0.2.10"}, {IP: "2001:db8::10"}}
	}
	steps := []transitionStep{
		{"single", func(n *testNode) {
			n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}), v6slice("fd00:10:244:2::7"))
		}},
		{"dual", func(n *testNode) { n.apply(service("web", "10.96.0.10", v6)) }},
		{"dual LB", func(n *testNode) { n.apply(service("web", "10.96.0.10", v6, np)) }},
		{"v6 slice empty", func(n *testNode) { n.apply(v6slice()) }},
		{"v6 slice back", func(n *testNode) { n.apply(v6slice("fd00:10:244:2::8")) }},
		{"single LB", func(n *testNode) { n.apply(service("web", "10.96.0.10", np)) }},
		{"dual again", func(n *testNode) { n.apply(service("web", "10.96.0.10", v6, np)) }},
		{"clusterIP", func(n *testNode) { n.apply(service("web", "10.96.0.10", v6)) }},
	}
	return steps
}

func sortedViews(v []lbView) []string {
	out := make([]string, len(v))
	for i := range v {
		out[i] = fmt.Sprintf("%+v", v[i])
	}
	sort.Strings(out)
	return out
}
