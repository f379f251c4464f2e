//go:build linux

package framework

import (
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy-diag/diag"
	"github.com/hnsproxy/hnsproxy/hnslb"
)

// LBView is one HNS load balancer read back from a node's dump, with the
// Service port it serves (found by frontend address and port).
type LBView struct {
	// Service is namespace/name:port-name ("" when no Service matches).
	Service string
	// Role is which of the Service's frontends the load balancer is:
	// ClusterIP, NodePort, ExternalIP, LoadBalancer, HealthCheck.
	Role string
	// Frontend is VIP:port/PROTO (the VIP is "*" for a NodePort, which
	// listens on every node address), and the backend port.
	Frontend string
	// Flags are the load balancer's and its port mapping's flags in words.
	Flags []string
	// Backends are the backend endpoints' addresses, sorted, each marked
	// "local" or "remote".
	Backends []string
	LB       hnslb.LoadBalancer
}

// Line is the view in one line: "frontend [flags] backends".
func (v LBView) Line() string {
	return fmt.Sprintf("%s [%s] %s", v.Frontend, strings.Join(v.Flags, ","), strings.Join(v.Backends, ","))
}

// DescribeLoadBalancers reads every load balancer of snap and attributes it
// to a Service port of svcs. Views come sorted by Service, role, frontend.
func DescribeLoadBalancers(snap *hnslb.Snapshot, svcs []corev1.Service) []LBView {
	endpoints := map[string]hnslb.Endpoint{}
	for _, e := range snap.Endpoints {
		endpoints[e.ID] = e
	}
	var out []LBView
	for _, lb := range snap.LoadBalancers {
		v := LBView{LB: lb, Flags: lb.FlagWords()}
		var pm hnslb.PortMapping
		if len(lb.PortMappings) > 0 {
			pm = lb.PortMappings[0]
		}
		v.Frontend = diag.Frontend(&lb)
		for _, id := range lb.HostComputeEndpoints {
			e, ok := endpoints[id]
			switch {
			case !ok:
				v.Backends = append(v.Backends, id+"(missing)")
			case len(e.IpConfigurations) == 0:
				v.Backends = append(v.Backends, e.Name+"(no-ip)")
			default:
				where := "local"
				if e.IsRemote() {
					where = "remote"
				}
				v.Backends = append(v.Backends, addressOfFamily(e, lb.Flags&hnslb.LoadBalancerFlagsIPv6 != 0)+"("+where+")")
			}
		}
		sortAddrs(v.Backends)
		v.Service, v.Role = serviceOf(lb, pm, svcs)
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Service != b.Service {
			return a.Service < b.Service
		}
		if a.Role != b.Role {
			return a.Role < b.Role
		}
		return a.Frontend < b.Frontend
	})
	return out
}

// addressOfFamily is the endpoint's address a load balancer of that family
// uses: a dual-stack pod's endpoint has one of each.
func addressOfFamily(e hnslb.Endpoint, ipv6 bool) string {
	for _, c := range e.IpConfigurations {
		if a, err := netip.ParseAddr(c.IpAddress); err == nil && a.Is6() == ipv6 {
			return c.IpAddress
		}
	}
	return e.IpConfigurations[0].IpAddress
}

// serviceOf finds the Service port a load balancer serves.
func serviceOf(lb hnslb.LoadBalancer, pm hnslb.PortMapping, svcs []corev1.Service) (string, string) {
	proto := hnslb.ProtocolName(pm.Protocol)
	for _, s := range svcs {
		for _, p := range s.Spec.Ports {
			name := s.Namespace + "/" + s.Name + ":" + p.Name
			if string(p.Protocol) != proto {
				continue
			}
			if len(lb.FrontendVIPs) == 0 {
				if p.NodePort != 0 && int32(pm.ExternalPort) == p.NodePort {
					return name, "NodePort"
				}
				continue
			}
			vip := lb.FrontendVIPs[0]
			if int32(pm.ExternalPort) != p.Port {
				continue
			}
			switch {
			case slices.Contains(s.Spec.ClusterIPs, vip):
				return name, "ClusterIP"
			case slices.Contains(s.Spec.ExternalIPs, vip):
				return name, "ExternalIP"
			case slices.ContainsFunc(s.Status.LoadBalancer.Ingress, func(i corev1.LoadBalancerIngress) bool { return i.IP == vip }):
				return name, "LoadBalancer"
			}
		}
		if s.Spec.HealthCheckNodePort != 0 && int32(pm.ExternalPort) == s.Spec.HealthCheckNodePort {
			return s.Namespace + "/" + s.Name, "HealthCheck"
		}
	}
	return "", ""
}

// sortAddrs sorts "IP(suffix)" strings by address.
func sortAddrs(s []string) {
	key := func(v string) netip.Addr {
		ip, _, _ := strings.Cut(v, "(")
		a, _ := netip.ParseAddr(ip)
		return a
	}
	sort.SliceStable(s, func(i, j int) bool { return key(s[i]).Less(key(s[j])) })
}

// WriteLBTable prints views as a table; more than maxBackends backends are
// summarised.
func WriteLBTable(w io.Writer, views []LBView, maxBackends int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tROLE\tFRONTEND -> BACKEND PORT\tFLAGS\tBACKENDS")
	for _, v := range views {
		svc := v.Service
		if svc == "" {
			svc = "(no Service)"
		}
		backends := v.Backends
		if len(backends) > maxBackends {
			backends = append(slices.Clone(backends[:maxBackends]), fmt.Sprintf("... %d in all", len(v.Backends)))
		}
		flags := strings.Join(v.Flags, " ")
		if flags == "" {
			flags = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", svc, v.Role, v.Frontend, flags, strings.Join(backends, " "))
	}
	return tw.Flush()
}
