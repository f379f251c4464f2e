package diag

import (
	"net/netip"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/internal/kubeip"
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

// servicePort names the Service port a frontend key serves
// ("namespace/name:port") and its role; "" when no Service has it.
func (in *Inputs) servicePort(key intent.LBKey) (service, role string) {
	for i := range in.Services {
		s := &in.Services[i]
		name := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}.String()
		for _, p := range s.Spec.Ports {
			if protocolNumber(p.Protocol) != key.Protocol {
				continue
			}
			port := name + ":" + portName(p)
			switch {
			case key.VIP == "":
				if p.NodePort != 0 && p.NodePort == int32(key.Port) {
					return port, RoleNodePort
				}
			case int32(key.Port) != p.Port:
			case slices.Contains(s.Spec.ClusterIPs, key.VIP) || s.Spec.ClusterIP == key.VIP:
				return port, RoleClusterIP
			case slices.Contains(s.Spec.ExternalIPs, key.VIP):
				return port, RoleExternalIP
			case ingressHas(s, key.VIP):
				return port, RoleLoadBalancer
			}
		}
		if key.VIP != "" && ingressHas(s, key.VIP) {
			return name, RoleHealthCheck // --forward-healthcheck-vip: ingressIP:health port
		}
	}
	return "", ""
}

func ingressHas(s *v1.Service, ip string) bool {
	return slices.ContainsFunc(s.Status.LoadBalancer.Ingress, func(i v1.LoadBalancerIngress) bool { return i.IP == ip })
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
