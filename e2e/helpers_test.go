//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// pollEvery paces convergence polls; framework.ConvergeWait bounds them.
const pollEvery = 250 * time.Millisecond

// lb is the expected view of one HNS load balancer: role, frontend and
// backend port, flags in words and backend addresses with locality, in the
// shape framework.LBView prints ("ROLE FRONTEND [FLAGS] BACKENDS").
func lb(role, frontend string, flags []string, backends ...string) string {
	return fmt.Sprintf("%s %s [%s] %s", role, frontend, strings.Join(flags, ","), strings.Join(backends, ","))
}

func flags(f ...string) []string { return f }

// local and remote mark backend addresses as framework.LBView does;
// local6 and remote6 do it with the pods' IPv6 addresses.
func local(pods ...framework.Pod) []string   { return marked("local", false, pods) }
func remote(pods ...framework.Pod) []string  { return marked("remote", false, pods) }
func local6(pods ...framework.Pod) []string  { return marked("local", true, pods) }
func remote6(pods ...framework.Pod) []string { return marked("remote", true, pods) }

func marked(where string, ipv6 bool, pods []framework.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Addr(ipv6).String()+"("+where+")")
	}
	return out
}

// backends joins address lists sorted by address, as LBView sorts them.
func backends(lists ...[]string) []string {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.SortFunc(all, func(a, b string) int {
		pa, _, _ := strings.Cut(a, "(")
		pb, _, _ := strings.Cut(b, "(")
		return netip.MustParseAddr(pa).Compare(netip.MustParseAddr(pb))
	})
	return all
}

// serviceViews are the node's load balancers serving svc, one line each, sorted.
func serviceViews(ctx context.Context, c *framework.Cluster, n *framework.Node, svc *corev1.Service) ([]string, error) {
	snap, err := n.Sim.Dump(ctx)
	if err != nil {
		return nil, err
	}
	svcs, err := c.Admin.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	prefix := svc.Namespace + "/" + svc.Name
	var out []string
	for _, v := range framework.DescribeLoadBalancers(snap, svcs.Items) {
		if v.Service == prefix || strings.HasPrefix(v.Service, prefix+":") {
			out = append(out, v.Role+" "+v.Line())
		}
	}
	slices.Sort(out)
	return out, nil
}

// expectLBs waits until node n's HNS holds exactly want for svc.
func expectLBs(t *testing.T, c *framework.Cluster, n *framework.Node, svc *corev1.Service, want ...string) {
	t.Helper()
	want = slices.Clone(want)
	slices.Sort(want)
	var got []string
	// Once something failed, later checks only sample: a broken test
	// should not wait out every expectation.
	wait := framework.ConvergeWait
	if t.Failed() {
		wait = 3 * time.Second
	}
	err := framework.Poll(context.Background(), wait, pollEvery, func(ctx context.Context) error {
		views, err := serviceViews(ctx, c, n, svc)
		if err != nil {
			return err
		}
		got = views
		if !slices.Equal(got, want) {
			return fmt.Errorf("differs")
		}
		return nil
	})
	if err != nil {
		t.Errorf("node %s, service %s/%s: HNS load balancers %v\n got:\n  %s\n want:\n  %s", n.Name(), svc.Namespace, svc.Name, err,
			strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// expectCappedLB waits until node n's HNS holds one load balancer for svc
// (a single-port ClusterIP Service over pods, more of them than capacity)
// with exactly capacity backends, each one of the pods, none twice, and
// every pod local to n among them: the subset keeps local endpoints first.
func expectCappedLB(t *testing.T, c *framework.Cluster, n *framework.Node, svc *corev1.Service, pods []framework.Pod, capacity int) {
	t.Helper()
	locals := local(onNode(pods, n.Name())...)
	all := backends(locals, remote(notOnNode(pods, n.Name())...))
	err := framework.Poll(context.Background(), framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		views, err := serviceViews(ctx, c, n, svc)
		if err != nil {
			return err
		}
		if len(views) != 1 {
			return errorf("want one load balancer, got %v", views)
		}
		fields := strings.Fields(views[0])
		subset := strings.Split(fields[len(fields)-1], ",")
		if len(subset) != capacity {
			return errorf("%d backends, want %d", len(subset), capacity)
		}
		for _, b := range subset {
			if !slices.Contains(all, b) {
				return errorf("backend %s is not one of the Service's endpoints", b)
			}
		}
		if compacted := slices.Compact(slices.Clone(subset)); len(compacted) != len(subset) {
			return errorf("repeated backends in %v", subset)
		}
		for _, l := range locals {
			if len(locals) <= capacity && !slices.Contains(subset, l) {
				return errorf("local endpoint %s left out of the subset %v", l, subset)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("node %s (backend cap %d), service %s/%s: %v", n.Name(), capacity, svc.Namespace, svc.Name, err)
	}
}

// tracePacket traces f across every node, failing t on error.
func tracePacket(t *testing.T, c *framework.Cluster, f framework.Flow) framework.Trace {
	t.Helper()
	tr, err := c.Trace(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// flowCase is one flow and the verdict it must get.
type flowCase struct {
	name    string
	flow    framework.Flow
	outcome vfp.Outcome
	// backends: the packet must reach one of these addresses (IP, any port
	// given by port); empty skips the check.
	backends []framework.Pod
	port     uint16
	// node: BackendNode must be this (for host deliveries and drops "").
	node string
	// clientIP: the receiver must see the original source.
	clientIP *bool
	// seenDst: the receiver must see this destination address (preserve-destination).
	seenDst string
}

func checkFlow(t *testing.T, c *framework.Cluster, fc flowCase) {
	t.Helper()
	tr := tracePacket(t, c, fc.flow)
	v := tr.Verdict
	fail := func(format string, args ...any) {
		t.Errorf("%s (%s): %s\nverdict: %s", fc.name, fc.flow, fmt.Sprintf(format, args...), tr.Summary)
	}
	if v.Outcome != fc.outcome {
		fail("outcome %s, want %s", v.Outcome, fc.outcome)
		return
	}
	if len(fc.backends) > 0 {
		ok := slices.ContainsFunc(fc.backends, func(p framework.Pod) bool {
			return v.Backend == netip.AddrPortFrom(p.Addr(v.Backend.Addr().Is6()), fc.port)
		})
		if !ok {
			fail("backend %s is not one of %v (port %d)", v.Backend, podIPs(fc.backends), fc.port)
		}
	}
	if fc.node != "" && v.BackendNode != fc.node {
		fail("reached node %q, want %q", v.BackendNode, fc.node)
	}
	if fc.clientIP != nil && v.ClientIPPreserved != *fc.clientIP {
		fail("client IP preserved %v, want %v", v.ClientIPPreserved, *fc.clientIP)
	}
	if fc.seenDst != "" && v.SeenDst.Addr().String() != fc.seenDst {
		fail("receiver sees destination %s, want %s", v.SeenDst, fc.seenDst)
	}
}

func podIPs(pods []framework.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.IP.String())
	}
	return out
}

func onNode(pods []framework.Pod, node string) []framework.Pod {
	var out []framework.Pod
	for _, p := range pods {
		if p.Node == node {
			out = append(out, p)
		}
	}
	return out
}

func wire(t *testing.T, n *framework.Node, prefix string, count int) []framework.Pod {
	t.Helper()
	pods, err := n.WirePods(context.Background(), prefix, count)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

func apply(t *testing.T, c *framework.Cluster, svc *corev1.Service, b []framework.Backend) *corev1.Service {
	t.Helper()
	if err := framework.EnsureNamespace(context.Background(), c, svc.Namespace); err != nil {
		t.Fatal(err)
	}
	created, err := framework.ApplyService(context.Background(), c, svc, b)
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// service is a Service with one TCP port name "p" port -> target.
func service(ns, name string, typ corev1.ServiceType, port, target int32) *corev1.Service {
	if typ == "" {
		typ = corev1.ServiceTypeClusterIP
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{
			Type:  typ,
			Ports: []corev1.ServicePort{{Name: "p", Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(target)}},
		},
	}
}

// addr is "ip:port", with the IPv6 address in brackets.
func addr(ip string, port int32) string {
	return netip.AddrPortFrom(netip.MustParseAddr(ip), uint16(port)).String()
}

// frontend is "VIP:port/PROTO->target" as hnsproxy-diag writes it: an IPv6
// VIP in brackets; for NodePorts "*" (IPv4) or "::" (written "[::]", IPv6).
func frontend(vip string, port int32, proto string, target int32) string {
	return fmt.Sprintf("%s/%s->%d", net.JoinHostPort(vip, strconv.Itoa(int(port))), proto, target)
}

func boolp(b bool) *bool { return &b }
func itoa(i int) string  { return strconv.Itoa(i) }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// nthIP is the n-th address of a CIDR.
func nthIP(cidr string, n int) string {
	a := netip.MustParsePrefix(cidr).Masked().Addr()
	for range n {
		a = a.Next()
	}
	return a.String()
}

// repairOnlySpec is l2bridgeSpec with full syncs rare, so that only drift
// repair can restore a load balancer deleted behind hnsproxy's back.
func repairOnlySpec() framework.ClusterSpec {
	spec := l2bridgeSpec
	spec.ProxyArgs = []string{"--sync-period=1h"}
	return spec
}

// webAndIngress is the workload the operations and Windows lanes start
// from, programmed: web's pods (two on the first node, one on the second)
// behind a ClusterIP Service, and ing's (two on the first) behind an
// ingress Service of type LoadBalancer with ETP Local on ingressLocal.
// want is each node's web load balancer.
type webAndIngress struct {
	web, ing      []framework.Pod
	webSvc, lbSvc *corev1.Service
	want          map[*framework.Node][]string
}

// startWebAndIngress applies webAndIngress (the ingress Service on
// nodePort, or an allocated one if 0) and expects its load balancers.
func startWebAndIngress(t *testing.T, c *framework.Cluster, nodePort int32) webAndIngress {
	t.Helper()
	a, b := c.Nodes[0], c.Nodes[1]
	w := webAndIngress{
		web:  append(wire(t, a, "web", 2), wire(t, b, "web", 1)...),
		ing:  wire(t, a, "ing", 2),
		want: map[*framework.Node][]string{},
	}
	w.webSvc = apply(t, c, service("web", "web", "", 80, 8080), framework.Backends(w.web))
	lbSvc := service("web", "ingress", corev1.ServiceTypeLoadBalancer, 443, 8443)
	lbSvc.Spec.Ports[0].NodePort = nodePort
	lbSvc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	lbSvc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ingressLocal}}
	w.lbSvc = apply(t, c, lbSvc, framework.Backends(w.ing))

	for _, n := range c.Nodes {
		all := backends(local(onNode(w.web, n.Name())...), remote(notOnNode(w.web, n.Name())...))
		w.want[n] = []string{lb("ClusterIP", frontend(w.webSvc.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), all...)}
		expectLBs(t, c, n, w.webSvc, w.want[n]...)
	}
	expectLBs(t, c, a, w.lbSvc,
		lb("ClusterIP", frontend(w.lbSvc.Spec.ClusterIP, 443, "TCP", 8443), flags("DSR"), local(w.ing...)...),
		lb("LoadBalancer", frontend(ingressLocal, 443, "TCP", 8443), flags("DSR", "VIP-external-IP"), local(w.ing...)...),
		lb("NodePort", frontend("*", w.lbSvc.Spec.Ports[0].NodePort, "TCP", 8443), flags("DSR", "local-routed-VIP", "VIP-external-IP"), local(w.ing...)...))
	return w
}
