//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy-diag/diag"
	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// workload is what the demo deployed.
type workload struct {
	*framework.DemoWorkload
	oneShot bool
}

// print writes the per-node tables, the traces and where to look next.
func (w *workload) print(ctx context.Context, out io.Writer, c *framework.Cluster, dir string) error {
	fmt.Fprintln(out, "\nServices (as created with client-go; EndpointSlices published for the wired pods):")
	for _, s := range w.Services {
		fmt.Fprintf(out, "  %-22s %-12s clusterIP %-12s %s\n", s.Namespace+"/"+s.Name, s.Spec.Type, s.Spec.ClusterIP, describeService(s))
	}
	for _, n := range c.Nodes {
		snap, err := n.Sim.Dump(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\nNode %s (%s, HNS %d.%d, node IP %s, pods %s): %d HNS load balancers\n",
			n.Name(), n.Spec.Profile, snap.Version.Major, snap.Version.Minor, n.Spec.NodeIP, n.Spec.PodCIDR, len(snap.LoadBalancers))
		if err := framework.WriteLBTable(out, framework.DescribeLoadBalancers(snap, w.ServiceList()), 4); err != nil {
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
		fmt.Fprintf(out, "    => %s\n", diag.Sentence(t.Verdict))
		for _, h := range t.Verdict.Hops {
			fmt.Fprintf(out, "       %s\n", names.Replace(h.String()))
		}
	}
	fmt.Fprintln(out, "\nWhere to look:")
	for _, n := range c.Nodes {
		fmt.Fprintf(out, "  %s: metrics %s  debug %s  healthz %s\n", n.Name(), n.Proxy.MetricsURL(), n.Proxy.DebugURL(), n.Proxy.HealthzURL())
		fmt.Fprintf(out, "  %s: log %s  HNS: _output/bin/hnssim --socket %s dump\n", n.Name(), n.Proxy.LogPath(), n.Sim.Socket)
		fmt.Fprintf(out, "  %s: why: _output/bin/hnsproxy-diag %s [trace --src IP:PORT --dst IP:PORT/PROTO]\n", n.Name(), strings.Join(n.Proxy.Args(), " "))
	}
	fmt.Fprintf(out, "  kubectl --kubeconfig %s get svc,endpointslices -A\n", c.CP.AdminKubeconfig())
	fmt.Fprintf(out, "  hnsproxy runs as %s (deploy/base/rbac.yaml); files in %s\n", c.Identity.User(), dir)
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
	for _, pods := range w.Pods {
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
		for _, v := range framework.DescribeLoadBalancers(snap, w.ServiceList()) {
			pairs = append(pairs, v.LB.ID, "["+v.Service+" "+v.Role+"]")
		}
	}
	return strings.NewReplacer(pairs...), nil
}
