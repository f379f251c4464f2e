package diag

import (
	"net/netip"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/internal/kubeip"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// place is what Kubernetes says is behind an address: a pod (from an
// EndpointSlice's targetRef) and the node it runs on.
type place struct {
	Pod  string // namespace/name; "" when the slice names no Pod
	Node string
}

// podPlaces indexes every EndpointSlice address by IP, read as the proxier
// reads it (kubeip).
func (in *Inputs) podPlaces() map[netip.Addr]place {
	out := map[netip.Addr]place{}
	for i := range in.Slices {
		for _, ep := range in.Slices[i].Endpoints {
			var p place
			if ep.TargetRef != nil && ep.TargetRef.Kind == "Pod" {
				p.Pod = ep.TargetRef.Namespace + "/" + ep.TargetRef.Name
			}
			if ep.NodeName != nil {
				p.Node = *ep.NodeName
			}
			for _, a := range ep.Addresses {
				if ip, ok := kubeip.ParseAddr(a); ok {
					out[ip.Unmap()] = p
				}
			}
		}
	}
	return out
}

// nodeAddresses maps every Node's InternalIP and ExternalIP to its name.
func (in *Inputs) nodeAddresses() map[netip.Addr]string {
	out := map[netip.Addr]string{}
	for i := range in.Nodes {
		for _, a := range in.Nodes[i].Status.Addresses {
			if a.Type != v1.NodeInternalIP && a.Type != v1.NodeExternalIP {
				continue
			}
			if ip, ok := kubeip.ParseAddr(a.Address); ok {
				out[ip.Unmap()] = in.Nodes[i].Name
			}
		}
	}
	return out
}

// Roles of a load balancer: which frontend of a Service it is.
const (
	RoleClusterIP    = "ClusterIP"
	RoleNodePort     = "NodePort"
	RoleExternalIP   = "ExternalIP"
	RoleLoadBalancer = "LoadBalancer"
	RoleHealthCheck  = "HealthCheck"
)

// frontends names the Service port behind each frontend, indexed once:
// every row and every load balancer a trace names asks, and a scan of
// the Services for each took minutes at 10,000 Services.
type frontends struct {
	ports map[frontendKey]frontendName
	// ingress holds each load-balancer ingress IP's Service, on any port:
	// --forward-healthcheck-vip's ingressIP:health-port load balancer.
	ingress map[string]frontendName
}

// frontendKey is an LBKey without its family; VIP "" for a node port.
type frontendKey struct {
	vip      string
	protocol uint32
	port     uint16
}

// frontendName is a frontend's Service port and role, with what ranks its
// claim as hnsproxy ranks claims on one frontend (proxier/desired): who
// chose the address (origin), then the older Service, then the first by
// name. Ranking by the list's order named a cluster IP's load balancer
// after a tenant's Service listed earlier whose external IP is that
// cluster IP, which hnsproxy refuses.
type frontendName struct {
	service, role string
	origin        intent.Origin
	who           desired.Claimant
}

// outranks reports whether n's claim on a frontend wins over o's.
func (n frontendName) outranks(o frontendName) bool {
	if n.origin.Rank() != o.origin.Rank() {
		return n.origin.Rank() < o.origin.Rank()
	}
	return n.who.Outranks(o.who)
}

// frontendsOf indexes the Services' frontends. Their addresses are read as
// the desired state reads them (kubeip), so a Service's non-canonical
// address names the load balancer HNS holds in canonical form.
func frontendsOf(svcs []v1.Service) frontends {
	f := frontends{ports: map[frontendKey]frontendName{}, ingress: map[string]frontendName{}}
	claim := func(k frontendKey, n frontendName) {
		if have, taken := f.ports[k]; !taken || n.outranks(have) {
			f.ports[k] = n
		}
	}
	for i := range svcs {
		s := &svcs[i]
		nn := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
		who, name := desired.Claimant{Name: nn, Created: s.CreationTimestamp.Time}, nn.String()
		var ingress []string
		for _, in := range s.Status.LoadBalancer.Ingress {
			ingress = append(ingress, in.IP)
		}
		for _, p := range s.Spec.Ports {
			proto := protocolNumber(p.Protocol)
			service := name + ":" + portName(p)
			if p.NodePort > 0 && p.NodePort <= 0xffff {
				claim(frontendKey{"", proto, uint16(p.NodePort)}, frontendName{service, RoleNodePort, intent.OriginNodePort, who})
			}
			if p.Port <= 0 || p.Port > 0xffff {
				continue
			}
			for _, ips := range []struct {
				role   string
				origin intent.Origin
				ips    []string
			}{{RoleClusterIP, intent.OriginClusterIP, append([]string{s.Spec.ClusterIP}, s.Spec.ClusterIPs...)},
				{RoleExternalIP, intent.OriginExternalIP, s.Spec.ExternalIPs}, {RoleLoadBalancer, intent.OriginIngress, ingress}} {
				for _, ip := range ips.ips {
					if vip := canonicalIP(ip); vip != "" {
						claim(frontendKey{vip, proto, uint16(p.Port)}, frontendName{service, ips.role, ips.origin, who})
					}
				}
			}
		}
		for _, ip := range ingress {
			if vip := canonicalIP(ip); vip != "" {
				health := frontendName{name, RoleHealthCheck, intent.OriginHealthCheck, who}
				if have, taken := f.ingress[vip]; !taken || health.outranks(have) {
					f.ingress[vip] = health
				}
			}
		}
	}
	return f
}

// servicePort names the Service port a frontend key serves
// ("namespace/name:port") and its role; "" when no Service has it. A
// Service's ingress IP on a port none of its ports has is its health-check
// frontend, unless a claim that outranks it has that frontend.
func (f frontends) servicePort(key intent.LBKey) (service, role string) {
	port, onPort := f.ports[frontendKey{key.VIP, key.Protocol, key.Port}]
	health, onIngress := f.ingress[key.VIP]
	switch {
	case key.VIP == "" || (onPort && (!onIngress || !health.outranks(port))):
		return port.service, port.role
	case onIngress:
		return health.service, health.role
	}
	return "", ""
}

// canonicalIP is ip as HNS and the desired state print it; "" when it is
// not an address.
func canonicalIP(ip string) string {
	if a, ok := kubeip.ParseAddr(ip); ok {
		return a.Unmap().String()
	}
	return ""
}

func protocolNumber(p v1.Protocol) uint32 {
	switch p {
	case v1.ProtocolTCP, "":
		return hnslb.ProtocolTCP
	case v1.ProtocolUDP:
		return hnslb.ProtocolUDP
	}
	return 0
}

// portName is a Service port's name, else its number, as the desired
// state names owners.
func portName(p v1.ServicePort) string {
	if p.Name != "" {
		return p.Name
	}
	return strconv.Itoa(int(p.Port))
}
