//go:build linux

package framework

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// DemoCluster is `make demo`'s cluster: a Flannel-style VXLAN overlay with a Windows Server 2022 node
// and a Windows Server 2019 node (HNS 9.5: 64 backends per load balancer,
// no session affinity). Addresses are simulator data only.
var DemoCluster = ClusterSpec{
	NetworkType: NetworkOverlay,
	Nodes: []NodeSpec{
		{Name: "win-ws2022", Profile: "ws2022", NodeIP: "10.0.0.11", PodCIDR: "10.244.1.0/24"},
		{Name: "win-ws2019", Profile: "ws2019", NodeIP: "10.0.0.12", PodCIDR: "10.244.2.0/24"},
	},
}

// DemoIngressIP is the demo LoadBalancer's status address (TEST-NET-3, data only).
const DemoIngressIP = "203.0.113.10"

// DemoWorkload is what DeployDemo deployed.
type DemoWorkload struct {
	Client   Pod
	Pods     map[string][]Pod // by app
	Services []*corev1.Service
}

// DeployDemo wires the demo's pods on DemoCluster's two nodes and applies
// its four Services: cluster DNS, a NodePort web front end with session
// affinity, an externalTrafficPolicy Local ingress LoadBalancer with pods on
// the first node only, and an 80-backend batch Service.
func DeployDemo(ctx context.Context, c *Cluster) (*DemoWorkload, error) {
	w := &DemoWorkload{Pods: map[string][]Pod{}}
	n1, n2 := c.Nodes[0], c.Nodes[1]
	perNode := []struct {
		app  string
		node *Node
		n    int
	}{
		{"coredns", n1, 1}, {"coredns", n2, 1},
		{"web", n1, 2}, {"web", n2, 1},
		{"ingress", n1, 2},
		{"batch", n1, 40}, {"batch", n2, 40},
		{"client", n1, 1},
	}
	for _, p := range perNode {
		pods, err := p.node.WirePods(ctx, p.app, p.n)
		if err != nil {
			return nil, err
		}
		w.Pods[p.app] = append(w.Pods[p.app], pods...)
	}
	w.Client = w.Pods["client"][0]
	for _, ns := range []string{"kube-system", "web", "batch"} {
		if err := EnsureNamespace(ctx, c, ns); err != nil {
			return nil, err
		}
	}
	specs := []struct {
		svc  *corev1.Service
		pods []Pod
	}{
		{dnsService(), w.Pods["coredns"]},
		{webService(), w.Pods["web"]},
		{ingressService(), w.Pods["ingress"]},
		{batchService(), w.Pods["batch"]},
	}
	for _, s := range specs {
		created, err := ApplyService(ctx, c, s.svc, Backends(s.pods))
		if err != nil {
			return nil, err
		}
		w.Services = append(w.Services, created)
	}
	return w, nil
}

func demoPort(name string, proto corev1.Protocol, port, target int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: proto, Port: port, TargetPort: intstr.FromInt32(target)}
}

// dnsService is CoreDNS's kube-dns: UDP and TCP 53 on the well-known .10.
func dnsService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "kube-dns"}},
		Spec: corev1.ServiceSpec{
			ClusterIP: "10.96.0.10",
			Ports:     []corev1.ServicePort{demoPort("dns", corev1.ProtocolUDP, 53, 53), demoPort("dns-tcp", corev1.ProtocolTCP, 53, 53)},
		},
	}
}

// webService is a NodePort web front end with ClientIP session affinity.
func webService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "frontend", Namespace: "web"},
		Spec: corev1.ServiceSpec{
			Type:            corev1.ServiceTypeNodePort,
			Ports:           []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: 30080}},
			SessionAffinity: corev1.ServiceAffinityClientIP,
		},
	}
}

// ingressService is an ingress controller's LoadBalancer with
// externalTrafficPolicy Local (client IPs preserved, only nodes with a
// local pod answer) and the address a cloud load balancer would report.
func ingressService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx", Namespace: "web"},
		Spec: corev1.ServiceSpec{
			Type:                  corev1.ServiceTypeLoadBalancer,
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
			Ports:                 []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(8443), NodePort: 30443}},
		},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: DemoIngressIP, IPMode: ptr.To(corev1.LoadBalancerIPModeVIP)}}}},
	}
}

// batchService has 80 backends: more than HNS 9.5 (Windows Server 2019)
// takes in one load balancer.
func batchService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "workers", Namespace: "batch"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{demoPort("grpc", corev1.ProtocolTCP, 9000, 9000)}},
	}
}

// WaitProgrammed waits until each node has a ClusterIP load balancer for
// every Service port and two dumps in a row agree.
func (w *DemoWorkload) WaitProgrammed(ctx context.Context, c *Cluster) error {
	prev := map[string]string{}
	return Poll(ctx, ConvergeWait, 500*time.Millisecond, func(ctx context.Context) error {
		for _, n := range c.Nodes {
			snap, err := n.Sim.Dump(ctx)
			if err != nil {
				return err
			}
			views := DescribeLoadBalancers(snap, w.ServiceList())
			for _, s := range w.Services {
				for _, p := range s.Spec.Ports {
					name := s.Namespace + "/" + s.Name + ":" + p.Name
					if !slices.ContainsFunc(views, func(v LBView) bool { return v.Service == name && v.Role == "ClusterIP" }) {
						return fmt.Errorf("node %s: no ClusterIP load balancer for %s yet", n.Name(), name)
					}
				}
			}
			var lines []string
			for _, v := range views {
				lines = append(lines, v.Service+" "+v.Line())
			}
			cur := strings.Join(lines, "\n")
			if prev[n.Name()] != cur {
				prev[n.Name()] = cur
				return fmt.Errorf("node %s: HNS still changing", n.Name())
			}
		}
		return nil
	})
}

// ServiceList is the Services as values.
func (w *DemoWorkload) ServiceList() []corev1.Service {
	out := make([]corev1.Service, len(w.Services))
	for i, s := range w.Services {
		out[i] = *s
	}
	return out
}
