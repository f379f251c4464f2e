package desired

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

// PreserveDestinationAnnotation on a Service (value "true") keeps the
// load-balancer ingress IP as the destination backends see (winkernel's
// annotation: UseMux + PreserveDIP + DSR, local backends only).
const PreserveDestinationAnnotation = "preserve-destination"

// defaultAffinityTimeout is the API default of sessionAffinityConfig.clientIP.timeoutSeconds.
const defaultAffinityTimeout = 10800

var families = []intent.IPFamily{intent.IPv4, intent.IPv6}

// ForService computes the load balancers one Service asks of this node. It
// never fails: unusable parts of the input are left out and reported as
// Problems. Headless and ExternalName Services ask for nothing.
func ForService(in ServiceInput, cfg Config) ServiceResult {
	svc := in.Service
	if svc == nil {
		return ServiceResult{}
	}
	r := ServiceResult{
		Name:    types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name},
		Created: svc.CreationTimestamp.Time,
	}
	if svc.Spec.Type == v1.ServiceTypeExternalName || svc.Spec.ClusterIP == v1.ClusterIPNone {
		return r
	}
	b := getBuilder(svc, &cfg, r)
	b.build(in.Slices)
	r = b.r
	b.put()
	return r
}

// serviceBuilder carries one ForService call's working state.
type serviceBuilder struct {
	svc *v1.Service
	cfg Config
	r   ServiceResult

	clusterIPs  perFamily[netip.Addr] // the zero Addr for a family this node cannot serve
	clusterVIP  perFamily[string]     // a served cluster IP's text
	externalIPs perFamily[[]netip.Addr]
	ingressIPs  perFamily[[]netip.Addr]
	nodeIP      perFamily[string]
	sourceVIP   perFamily[string]

	etpLocal, itpLocal, preserveDIP, dsr bool
	distribution                         hnslb.Distribution

	buf          buffers
	keys         map[intent.LBKey]int // index into r.LBs, once there are more than linearLBs
	ingressReady perFamily[bool]
	localReady   []netip.Addr // for the health check: noteLocalReady
	unknownPA    map[netip.Addr]bool
	// zoneUnknown: a cluster-wide choice ignored zone hints for want of
	// this node's zone (selection.zoneUnknown).
	zoneUnknown bool
}

func (b *serviceBuilder) build(eps []*EndpointSlice) {
	if !b.families() {
		return
	}
	b.frontends()
	b.policies()
	b.sourceRanges()
	parsed, invalid := parseSlices(eps, &b.cfg, &b.buf)
	if invalid > 0 {
		b.problem(warn(ReasonInvalidEndpoint, "%d endpoints have no usable address and are ignored", invalid))
	}
	anyPort := false
	for i := range b.svc.Spec.Ports {
		if b.port(&b.svc.Spec.Ports[i], parsed) {
			anyPort = true
		}
	}
	b.healthCheckLBs()
	b.finish(anyPort)
}

// families records the Service's cluster IPs in the families this node can
// serve; false if there are none.
func (b *serviceBuilder) families() bool {
	ips := b.svc.Spec.ClusterIPs
	if len(ips) == 0 && b.svc.Spec.ClusterIP != "" {
		ips = []string{b.svc.Spec.ClusterIP}
	}
	for _, s := range ips {
		ip, ok := parseIP(s)
		if !ok {
			b.problem(warn(ReasonInvalidIP, "cluster IP %q is not a valid IP address", s))
			continue
		}
		fam := intent.FamilyOf(ip)
		if b.clusterIPs.has(fam) {
			continue
		}
		text := canonical(s, ip)
		b.r.ClusterIPs = append(b.r.ClusterIPs, text)
		if why, carried := b.familyUnsupported(fam); why != "" {
			kind := warn
			if !carried {
				kind = note
			}
			b.problem(kind(ReasonIPFamilyUnsupported, "cluster IP %s not served on this node: %s", ip, why).
				because("IPv%d cluster IPs are not served on this node: %s", fam, why))
			b.clusterIPs.put(fam, netip.Addr{}) // known family, not served
			continue
		}
		b.clusterIPs.put(fam, ip)
		b.clusterVIP.put(fam, text)
		node := ""
		if nip := b.cfg.NodeIPs[fam]; nip.IsValid() {
			node = nip.String()
		} else if hasNodePorts(b.svc) {
			b.problem(warn(ReasonIPFamilyUnsupported,
				"node ports not served in IPv%d on this node: the Node lists no IPv%d address (kubelet --node-ip); cluster IP %s is served", fam, fam, ip).
				because("node ports are not served in IPv%d on this node: the Node lists no IPv%d address (kubelet --node-ip)", fam, fam))
		}
		// l2bridge without a node IP of the family: no source VIP, as
		// winkernel's l2bridge load balancers have (HNS uses the host's).
		b.nodeIP.put(fam, node)
		b.sourceVIP.put(fam, node)
		if vip := b.cfg.SourceVIP[fam]; b.cfg.Mode == Overlay && vip.IsValid() {
			b.sourceVIP.put(fam, vip.String())
		}
	}
	return b.nodeIP.any()
}

// familyUnsupported says why this node does not serve fam's cluster IPs
// ("" if it does), and whether its network carries fam at all. Overlay
// (Flannel's and Calico's VXLAN) and HNS without IPv6 carry no IPv6: the
// node's pods have no IPv6 address to reach such a cluster IP with, and
// the node is single-stack in a dual-stack cluster, as upstream supports
// dual-stack Windows nodes on l2bridge only. Only a family the network
// carries but the node has no address of is something to fix (--node-ip).
func (b *serviceBuilder) familyUnsupported(fam intent.IPFamily) (why string, carried bool) {
	switch {
	case fam == intent.IPv6 && !b.cfg.Features.IPv6DualStack:
		return "HNS " + b.cfg.Features.Version.String() + " does not support IPv6", false
	case fam == intent.IPv6 && b.cfg.Mode == Overlay:
		return "overlay networks do not support IPv6", false
	case !b.cfg.NodeIPs[fam].IsValid() && b.cfg.Mode == Overlay:
		// Overlay needs it: the provider address of remote endpoints.
		return "the node has no IPv" + strconv.Itoa(int(fam)) + " address", true
	}
	return "", true
}

// served reports whether the Service has a cluster IP this node serves in fam.
func (b *serviceBuilder) served(fam intent.IPFamily) bool {
	return b.nodeIP.has(fam)
}

// frontends collects external IPs and load-balancer ingress IPs by family.
func (b *serviceBuilder) frontends() {
	if !b.cfg.IgnoreExternalIPs {
		for _, s := range b.svc.Spec.ExternalIPs {
			b.addFrontend(&b.externalIPs, "external IP", s)
		}
		if b.cfg.RefuseExternalIPsOnNodeAddresses {
			b.refuseNodeAddresses()
		}
	}
	for _, ing := range b.svc.Status.LoadBalancer.Ingress {
		if ing.IP == "" {
			continue // hostname-only ingress: nothing to program
		}
		// Like kube-proxy (proxyutil.IsVIPMode): only an unset ipMode or VIP
		// gets a load balancer. With Proxy the cloud load balancer sends
		// traffic to the node itself (it arrives on node ports); a mode a
		// newer apiserver added is one this version cannot know to be VIP.
		if ing.IPMode != nil && *ing.IPMode != v1.LoadBalancerIPModeVIP {
			continue
		}
		b.addFrontend(&b.ingressIPs, "load-balancer ingress IP", ing.IP)
	}
}

// refuseNodeAddresses drops external IPs equal to a node address
// (--refuse-node-external-ips): a namespace user could otherwise take the
// node's own traffic on the Service's ports.
func (b *serviceBuilder) refuseNodeAddresses() {
	for _, fam := range families {
		ips := b.externalIPs.get(fam)
		node := b.cfg.NodeIPs[fam]
		if i := slices.Index(ips, node); i >= 0 {
			b.problem(warn(ReasonExternalIPRefused,
				"external IP %s is this node's address; refused on this node (--refuse-node-external-ips)", node))
			b.externalIPs.put(fam, slices.Delete(ips, i, i+1))
		}
	}
}

func (b *serviceBuilder) addFrontend(into *perFamily[[]netip.Addr], what, s string) {
	ip, ok := parseIP(s)
	if !ok {
		b.problem(warn(ReasonInvalidIP, "%s %q is not a valid IP address", what, s))
		return
	}
	if kind := specialAddress(ip); kind != "" {
		b.problem(warn(ReasonInvalidIP, "%s %s is %s address, which cannot be a load-balancer frontend", what, ip, kind))
		return
	}
	fam := intent.FamilyOf(ip)
	if !b.clusterIPs.has(fam) {
		b.problem(warn(ReasonIPFamilyMismatch, "%s %s is IPv%d but the Service has no IPv%d cluster IP", what, ip, fam, fam))
		return
	}
	if !b.served(fam) || slices.Contains(into.get(fam), ip) {
		return // family problem already reported; duplicates are harmless
	}
	into.put(fam, append(into.get(fam), ip))
}

// policies reads traffic policies, the annotation and affinity, reporting
// what HNS cannot honour. Backend choice never depends on HNS features;
// only the packet treatment (DSR) does, and losing it is reported.
func (b *serviceBuilder) policies() {
	spec := &b.svc.Spec
	b.etpLocal = externallyAccessible(b.svc) && spec.ExternalTrafficPolicy == v1.ServiceExternalTrafficPolicyLocal
	b.itpLocal = spec.InternalTrafficPolicy != nil && *spec.InternalTrafficPolicy == v1.ServiceInternalTrafficPolicyLocal
	b.preserveDIP = b.svc.Annotations[PreserveDestinationAnnotation] == "true"
	b.dsr = b.cfg.Features.DSR
	if b.etpLocal && !b.dsr {
		b.problem(warn(ReasonNoDSRForLocalPolicy,
			"externalTrafficPolicy Local: HNS %s has no DSR, so backends see this node's address instead of the client's (traffic still stays on local endpoints)",
			b.cfg.Features.Version).
			because("HNS %s has no DSR, so the backends of externalTrafficPolicy Local Services see this node's address instead of the client's", b.cfg.Features.Version))
	}
	if b.preserveDIP && !b.dsr {
		b.problem(warn(ReasonNoDSRForPreserveDestination,
			"annotation %s: HNS %s has no DSR, so the destination IP is not preserved (traffic still stays on local endpoints)",
			PreserveDestinationAnnotation, b.cfg.Features.Version).
			because("HNS %s has no DSR, so Services annotated %s do not get the destination IP preserved", b.cfg.Features.Version, PreserveDestinationAnnotation))
	}
	if spec.SessionAffinity != v1.ServiceAffinityClientIP {
		return
	}
	if !b.cfg.Features.SessionAffinity {
		b.problem(warn(ReasonSessionAffinityUnsupported,
			"sessionAffinity ClientIP: HNS %s does not support session affinity; connections are spread without it", b.cfg.Features.Version).
			because("HNS %s does not support session affinity (it needs HNS 12.0), so connections to sessionAffinity ClientIP Services are spread without it", b.cfg.Features.Version))
		return
	}
	b.distribution = hnslb.DistributionSourceIP
	if c := spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil &&
		*c.ClientIP.TimeoutSeconds != defaultAffinityTimeout {
		b.problem(warn(ReasonSessionAffinityTimeout,
			"sessionAffinity ClientIP: HNS affinity has no timeout, timeoutSeconds %d is ignored", *c.ClientIP.TimeoutSeconds))
	}
}

// hasNodePorts says whether the Service asks for node ports.
func hasNodePorts(svc *v1.Service) bool {
	if svc.Spec.Type != v1.ServiceTypeNodePort && svc.Spec.Type != v1.ServiceTypeLoadBalancer {
		return false
	}
	return slices.ContainsFunc(svc.Spec.Ports, func(p v1.ServicePort) bool { return p.NodePort != 0 })
}

// externallyAccessible mirrors the API's notion: LoadBalancer and NodePort
// Services, and ClusterIP Services with external IPs.
func externallyAccessible(svc *v1.Service) bool {
	switch svc.Spec.Type {
	case v1.ServiceTypeLoadBalancer, v1.ServiceTypeNodePort:
		return true
	case v1.ServiceTypeClusterIP, "":
		return len(svc.Spec.ExternalIPs) > 0
	}
	return false
}

func (b *serviceBuilder) problem(p Problem) { b.r.Problems = append(b.r.Problems, p) }

// parseIP reads a Service's address as kube-proxy does (kubeip.ParseAddr),
// refusing what no load balancer can take: an IPv4-mapped or unspecified one.
func parseIP(s string) (netip.Addr, bool) {
	ip, ok := kubeip.ParseAddr(s)
	if !ok || ip.Is4In6() || ip.IsUnspecified() {
		return netip.Addr{}, false
	}
	return ip, true
}

// specialAddress names the kind of a frontend address no load balancer may
// take, or returns "". The API server refuses loopback and link-local
// external IPs (ValidateEndpointIP) but keeps them on objects created under
// older rules, and checks ingress IPs for syntax only; a multicast or
// broadcast address is never a connection's destination.
func specialAddress(ip netip.Addr) string {
	switch {
	case ip.IsLoopback():
		return "a loopback"
	case ip.IsLinkLocalUnicast():
		return "a link-local"
	case ip.IsMulticast():
		return "a multicast"
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast"
	}
	return ""
}

func protocolNumber(p v1.Protocol) (uint32, bool) {
	switch p {
	case v1.ProtocolTCP, "":
		return hnslb.ProtocolTCP, true
	case v1.ProtocolUDP:
		return hnslb.ProtocolUDP, true
	}
	return 0, false
}
