//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// clusterSpec: Flannel-style VXLAN overlay with a Windows Server 2022 node
// and a Windows Server 2019 node (HNS 9.5: 64 backends per load balancer,
// no session affinity). Addresses are simulator data only.
var clusterSpec = framework.ClusterSpec{
	NetworkType: framework.NetworkOverlay,
	Nodes: []framework.NodeSpec{
		{Name: "win-ws2022", Profile: "ws2022", NodeIP: "10.0.0.11", PodCIDR: "10.244.1.0/24"},
		{Name: "win-ws2019", Profile: "ws2019", NodeIP: "10.0.0.12", PodCIDR: "10.244.2.0/24"},
	},
}

// ingressIP is the LoadBalancer's status address (TEST-NET-3, data only).
const ingressIP = "203.0.113.10"

// workload is what the demo deployed.
type workload struct {
	oneShot  bool
	client   framework.Pod
	pods     map[string][]framework.Pod // by app
	services []*corev1.Service
}

func deploy(ctx context.Context, c *framework.Cluster) (*workload, error) {
	w := &workload{pods: map[string][]framework.Pod{}}
	n1, n2 := c.Nodes[0], c.Nodes[1]
	perNode := []struct {
		app  string
		node *framework.Node
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
		w.pods[p.app] = append(w.pods[p.app], pods...)
	}
	w.client = w.pods["client"][0]
	for _, ns := range []string{"kube-system", "web", "batch"} {
		if err := framework.EnsureNamespace(ctx, c, ns); err != nil {
			return nil, err
		}
	}
	specs := []struct {
		svc  *corev1.Service
		pods []framework.Pod
	}{
		{dnsService(), w.pods["coredns"]},
		{webService(), w.pods["web"]},
		{ingressService(), w.pods["ingress"]},
		{batchService(), w.pods["batch"]},
	}
	for _, s := range specs {
		created, err := framework.ApplyService(ctx, c, s.svc, framework.Backends(s.pods))
		if err != nil {
			return nil, err
		}
		w.services = append(w.services, created)
	}
	return w, nil
}

func port(name string, proto corev1.Protocol, port, target int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: proto, Port: port, TargetPort: intstr.FromInt32(target)}
}

// dnsService is CoreDNS's kube-dns: UDP and TCP 53 on the well-known .10.
func dnsService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "kube-dns"}},
		Spec: corev1.ServiceSpec{
			ClusterIP: "10.96.0.10",
			Ports:     []corev1.ServicePort{port("dns", corev1.ProtocolUDP, 53, 53), port("dns-tcp", corev1.ProtocolTCP, 53, 53)},
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
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: ingressIP, IPMode: ptr.To(corev1.LoadBalancerIPModeVIP)}}}},
	}
}

// batchService has 80 backends: more than HNS 9.5 (Windows Server 2019)
// takes in one load balancer.
func batchService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "workers", Namespace: "batch"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{port("grpc", corev1.ProtocolTCP, 9000, 9000)}},
	}
}

// waitProgrammed waits until each node has a ClusterIP load balancer for
// every Service port and two dumps in a row agree.
func (w *workload) waitProgrammed(ctx context.Context, c *framework.Cluster) error {
	prev := map[string]string{}
	return framework.Poll(ctx, framework.ConvergeWait, 500*time.Millisecond, func(ctx context.Context) error {
		for _, n := range c.Nodes {
			snap, err := n.Sim.Dump(ctx)
			if err != nil {
				return err
			}
			views := framework.DescribeLoadBalancers(snap, w.serviceList())
			for _, s := range w.services {
				for _, p := range s.Spec.Ports {
					name := s.Namespace + "/" + s.Name + ":" + p.Name
					if !slices.ContainsFunc(views, func(v framework.LBView) bool { return v.Service == name && v.Role == "ClusterIP" }) {
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

func (w *workload) serviceList() []corev1.Service {
	out := make([]corev1.Service, len(w.services))
	for i, s := range w.services {
		out[i] = *s
	}
	return out
}

// print writes the per-node tables, the traces and where to look next.
func (w *workload) print(ctx context.Context, out io.Writer, c *framework.Cluster, dir string) error {
	fmt.Fprintln(out, "\nServices (as created with client-go; EndpointSlices published for the wired pods):")
	for _, s := range w.services {
		fmt.Fprintf(out, "  %-22s %-12s clusterIP %-12s %s\n", s.Namespace+"/"+s.Name, s.Spec.Type, s.Spec.ClusterIP, describeService(s))
	}
	for _, n := range c.Nodes {
		snap, err := n.Sim.Dump(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\nNode %s (%s, HNS %d.%d, node IP %s, pods %s): %d HNS load balancers\n",
			n.Name(), n.Spec.Profile, snap.Version.Major, snap.Version.Minor, n.Spec.NodeIP, n.Spec.PodCIDR, len(snap.LoadBalancers))
		if err := framework.WriteLBTable(out, framework.DescribeLoadBalancers(snap, w.serviceList()), 4); err != nil {
			return err
		}
	}
	names, err := w.objectNames(ctx, c)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "\nPacket traces (hnssim's VFP model over both nodes' HNS state):")
	for _, f := range w.flows(c) {
		t, err := c.Trace(ctx, f.flow)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\n  %s\n    %s\n", f.what, f.flow)
		fmt.Fprintf(out, "    => %s\n", traceWords(t))
		for _, h := range t.Verdict.Hops {
			fmt.Fprintf(out, "       %s\n", names.Replace(h.String()))
		}
	}
	fmt.Fprintln(out, "\nWhere to look:")
	for _, n := range c.Nodes {
		fmt.Fprintf(out, "  %s: metrics %s  debug %s  healthz %s\n", n.Name(), n.Proxy.MetricsURL(), n.Proxy.DebugURL(), n.Proxy.HealthzURL())
		fmt.Fprintf(out, "  %s: log %s  HNS: _output/bin/hnssim --socket %s dump\n", n.Name(), n.Proxy.LogPath(), n.Sim.Socket)
	}
	fmt.Fprintf(out, "  kubectl --kubeconfig %s get svc,endpointslices -A\n", c.CP.AdminKubeconfig())
	fmt.Fprintf(out, "  hnsproxy runs as %s (deploy/rbac.yaml); files in %s\n", c.Identity.User(), dir)
	if w.oneShot {
		fmt.Fprintln(out, "  (DEMO_ONESHOT: everything above stops and is removed now)")
	}
	return nil
}

func describeService(s *corev1.Service) string {
	var parts []string
	for _, p := range s.Spec.Ports {
		e := fmt.Sprintf("%d/%s->%s", p.Port, p.Protocol, p.TargetPort.String())
		if p.NodePort != 0 {
			e += fmt.Sprintf(" nodePort %d", p.NodePort)
		}
		parts = append(parts, e)
	}
	if s.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		parts = append(parts, "affinity ClientIP")
	}
	if s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
		parts = append(parts, "externalTrafficPolicy Local")
	}
	if s.Spec.HealthCheckNodePort != 0 {
		parts = append(parts, fmt.Sprintf("healthCheckNodePort %d", s.Spec.HealthCheckNodePort))
	}
	for _, in := range s.Status.LoadBalancer.Ingress {
		parts = append(parts, "ingress "+in.IP)
	}
	return strings.Join(parts, ", ")
}

// objectNames replaces HNS object IDs in trace hops with what they are:
// pods by name, remote endpoints by address, load balancers by Service
// port and role.
func (w *workload) objectNames(ctx context.Context, c *framework.Cluster) (*strings.Replacer, error) {
	podByIP := map[string]string{}
	for _, pods := range w.pods {
		for _, p := range pods {
			podByIP[p.IP.String()] = p.Name
		}
	}
	var pairs []string
	for _, n := range c.Nodes {
		snap, err := n.Sim.Dump(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range snap.Endpoints {
			ip := ""
			if len(e.IpConfigurations) > 0 {
				ip = e.IpConfigurations[0].IpAddress
			}
			switch {
			case e.IsRemote():
				pairs = append(pairs, e.ID, "["+ip+" on another node]")
			case podByIP[ip] != "":
				pairs = append(pairs, e.ID, "[pod "+podByIP[ip]+"]")
			default:
				pairs = append(pairs, e.ID, "["+e.Name+"]")
			}
		}
		for _, v := range framework.DescribeLoadBalancers(snap, w.serviceList()) {
			pairs = append(pairs, v.LB.ID, "["+v.Service+" "+v.Role+"]")
		}
	}
	return strings.NewReplacer(pairs...), nil
}
