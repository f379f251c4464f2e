package desired

import (
	"net/netip"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// port adds the load balancers of one Service port in every served family.
// It returns false when the port cannot be served at all.
func (b *serviceBuilder) port(sp *v1.ServicePort, parsed []parsedSlice) bool {
	name := portName(sp)
	proto, ok := protocolNumber(sp.Protocol)
	if !ok {
		b.problem(warn(ReasonUnsupportedProtocol, "port %s: protocol %s is not supported by HNS load balancers (TCP and UDP only)", name, sp.Protocol))
		return false
	}
	if sp.Port < 1 || sp.Port > 65535 {
		b.problem(warn(ReasonInvalidPort, "port %s: %d is not a valid port", name, sp.Port))
		return false
	}
	nodePort := uint16(0)
	if sp.NodePort != 0 && (b.svc.Spec.Type == v1.ServiceTypeNodePort || b.svc.Spec.Type == v1.ServiceTypeLoadBalancer) {
		if sp.NodePort < 1 || sp.NodePort > 65535 {
			b.problem(warn(ReasonInvalidPort, "port %s: node port %d is not a valid port", name, sp.NodePort))
		} else {
			nodePort = uint16(sp.NodePort)
		}
	}
	pl := portLBs{b: b, owner: b.r.Name.String() + ":" + name, proto: proto, port: uint16(sp.Port), nodePort: nodePort}
	for _, fam := range families {
		if !b.served(fam) {
			continue
		}
		pe := endpointsForPort(parsed, fam, sp, &b.buf)
		if pe.badPort > 0 {
			b.problem(warn(ReasonInvalidEndpoint, "port %s: %d IPv%d endpoints have no valid port number and are ignored", name, pe.badPort, fam))
		}
		if pe.mixedDropped > 0 {
			b.r.MixedPortDropped += pe.mixedDropped
			b.problem(warn(ReasonMixedTargetPorts,
				"port %s: endpoints listen on different ports; HNS load balancers carry one, so %d IPv%d endpoints not on port %d are left out",
				name, pe.mixedDropped, fam, pe.port))
		}
		b.noteLocalReady(&pe)
		pl.family(fam, pe)
	}
	return true
}

// portName names a Service port in messages and owners: its name, else its number.
func portName(sp *v1.ServicePort) string {
	if sp.Name != "" {
		return sp.Name
	}
	return strconv.Itoa(int(sp.Port))
}

// portLBs builds the load balancers of one Service port.
type portLBs struct {
	b        *serviceBuilder
	owner    string
	proto    uint32
	port     uint16
	nodePort uint16
}

// family adds the port's load balancers of one family: ClusterIP, NodePort,
// each external IP and each ingress IP, in that order (on a key clash
// inside one Service the first wins).
func (pl *portLBs) family(fam intent.IPFamily, pe portEndpoints) {
	if len(pe.endpoints) == 0 {
		return
	}
	b := pl.b
	var clusterSel, localSel *selection
	cluster := func() selection {
		if clusterSel == nil {
			s := clusterSelection(pe.endpoints, b.cfg.NodeName, b.cfg.Zone)
			clusterSel = &s
		}
		return *clusterSel
	}
	local := func() selection {
		if localSel == nil {
			s := localSelection(pe.endpoints)
			localSel = &s
		}
		return *localSel
	}
	// Counted as kube-proxy counts them: only while some endpoint is
	// usable anywhere (the cluster-wide choice is empty only then).
	if (b.itpLocal || b.etpLocal) && len(local().endpoints) == 0 && len(cluster().endpoints) > 0 {
		if b.itpLocal {
			b.r.NoLocalInternal++
		}
		if b.etpLocal {
			b.r.NoLocalExternal++
		}
	}
	pick := func(localOnly bool) selection {
		if localOnly {
			return local()
		}
		s := cluster()
		b.zoneUnknown = b.zoneUnknown || s.zoneUnknown
		return s
	}
	v6 := hnslb.LoadBalancerFlagsNone
	if fam == intent.IPv6 {
		v6 = hnslb.LoadBalancerFlagsIPv6
	}
	dsrIf := func(on bool) hnslb.LoadBalancerFlags {
		if on && b.dsr {
			return v6 | hnslb.LoadBalancerFlagsDSR
		}
		return v6
	}
	mk := func(origin intent.Origin, vip string, port uint16, sel selection, pf hnslb.PortMappingFlags, f hnslb.LoadBalancerFlags) {
		b.add(intent.LBKey{Family: fam, VIP: vip, Protocol: pl.proto, Port: port}, origin, pe.port, sel, pf, f, b.distribution, pl.owner)
	}

	mk(intent.OriginClusterIP, b.clusterVIP.get(fam), pl.port, pick(b.itpLocal), hnslb.PortMappingFlagsNone, dsrIf(b.cfg.clusterDSR()))

	external := hnslb.PortMappingFlagsVipExternalIP
	if pl.nodePort != 0 && b.nodeIP.get(fam) != "" { // none: reported by families
		// preserve-destination keeps NodePort traffic on this node too
		// (winkernel: health probes on the node port must not be answered by
		// another node), but NodePort gets no UseMux/PreserveDIP.
		mk(intent.OriginNodePort, "", pl.nodePort, pick(b.etpLocal || b.preserveDIP || b.nodePortLocal(fam, local(), cluster())), external|hnslb.PortMappingFlagsLocalRoutedVIP, dsrIf(b.etpLocal))
	}
	for _, ip := range b.externalIPs.get(fam) {
		mk(intent.OriginExternalIP, ip.String(), pl.port, pick(b.etpLocal), external, dsrIf(b.etpLocal))
	}
	ingressFlags := external
	if b.preserveDIP && b.dsr {
		ingressFlags |= hnslb.PortMappingFlagsUseMux | hnslb.PortMappingFlagsPreserveDIP
	}
	for _, ip := range b.ingressIPs.get(fam) {
		sel := pick(b.etpLocal || b.preserveDIP)
		mk(intent.OriginIngress, ip.String(), pl.port, sel, ingressFlags, dsrIf(b.etpLocal || b.preserveDIP))
		// Health-check forwarding needs ready endpoints (winkernel: not
		// when all are terminating), so cloud probes drain this node.
		if len(sel.endpoints) > 0 && !sel.fallback {
			b.ingressReady.put(fam, true)
		}
	}
}

// add appends one load balancer unless it has no backends. Within one
// Service, a second load balancer with the same key is dropped (reported
// unless identical).
func (b *serviceBuilder) add(key intent.LBKey, origin intent.Origin, internalPort uint16, sel selection,
	pf hnslb.PortMappingFlags, f hnslb.LoadBalancerFlags, dist hnslb.Distribution, owner string) {
	if len(sel.endpoints) == 0 {
		return // winkernel makes no load balancer without endpoints; HNS needs one
	}
	kept, spares, dropped := capEndpoints(sel.endpoints, b.cfg.maxBackends())
	b.r.Truncated = max(b.r.Truncated, dropped)
	lb := intent.LB{
		Key:          key,
		SourceVIP:    b.lbSourceVIP(key.Family, kept),
		InternalPort: internalPort,
		Distribution: dist,
		PortFlags:    pf,
		Flags:        f,
		Backends:     b.backendsOf(kept),
		Owner:        owner,
		Origin:       origin,
	}
	for _, e := range spares {
		lb.Spares = append(lb.Spares, e.backend)
	}
	for i := range kept {
		if kept[i].noPA {
			if b.unknownPA == nil {
				b.unknownPA = map[netip.Addr]bool{}
			}
			b.unknownPA[kept[i].ip] = b.unknownPA[kept[i].ip] || !kept[i].backend.NodeUnknown
		}
	}
	b.addLB(lb)
}

// backendsOf is the backends of kept. A Service's frontends on one port
// mostly balance to the same backends (its cluster IP, node port and
// external IPs): a load balancer whose backends equal those of the one
// added before it shares that one's slice (read-only, as every consumer
// treats it): a Service with three frontends holds its backends once, not
// three times.
func (b *serviceBuilder) backendsOf(kept []*endpoint) []intent.Backend {
	if n := len(b.r.LBs); n > 0 {
		if prev := b.r.LBs[n-1].Backends; len(prev) == len(kept) && sameBackends(prev, kept) {
			return prev
		}
	}
	out := make([]intent.Backend, len(kept))
	for i := range kept {
		out[i] = kept[i].backend
	}
	return out
}

func sameBackends(bs []intent.Backend, kept []*endpoint) bool {
	for i := range bs {
		if bs[i] != kept[i].backend {
			return false
		}
	}
	return true
}

func (b *serviceBuilder) addLB(lb intent.LB) {
	if j, dup := b.lbIndex(lb.Key); dup {
		kept := &b.r.LBs[j]
		same := lb
		same.Origin = kept.Origin
		switch {
		case !intent.EqualLB(kept, &same):
			b.problem(warn(ReasonLoadBalancerConflict, "%s (%s) is already used by this Service's %s; left out", lb.Key, lb.Owner, kept.Owner))
		case lb.Origin.Rank() < kept.Origin.Rank():
			kept.Origin = lb.Origin // the same load balancer, claimed with the better rank
		}
		return
	}
	b.r.LBs = append(b.r.LBs, lb)
	switch n := len(b.r.LBs); {
	case b.keys != nil:
		b.keys[lb.Key] = n - 1
	case n > linearLBs:
		b.keys = make(map[intent.LBKey]int, 2*n)
		for j := range b.r.LBs {
			b.keys[b.r.LBs[j].Key] = j
		}
	}
}

// linearLBs: up to this many load balancers a Service's keys are found by
// scanning them (most Services have one to three); beyond it, by a map.
const linearLBs = 16

// lbIndex finds the Service's load balancer with key.
func (b *serviceBuilder) lbIndex(key intent.LBKey) (int, bool) {
	if b.keys != nil {
		j, ok := b.keys[key]
		return j, ok
	}
	for j := range b.r.LBs {
		if b.r.LBs[j].Key == key {
			return j, true
		}
	}
	return 0, false
}

// lbSourceVIP: l2bridge uses the node IP. Overlay uses the source VIP,
// except (winkernel) when a remote backend is another node's own address
// or outside every remote subnet: then the node IP.
func (b *serviceBuilder) lbSourceVIP(fam intent.IPFamily, backends []*endpoint) string {
	for i := range backends {
		if backends[i].remoteNode || backends[i].noPA {
			return b.nodeIP.get(fam)
		}
	}
	return b.sourceVIP.get(fam)
}

// healthCheckLBs adds, with --forward-healthcheck-vip, one load balancer per
// ingress IP forwarding ingressIP:healthPort to the node's gateway endpoint.
// winkernel makes one per Service port with the port's protocol; the probe
// is HTTP, so one TCP load balancer per ingress IP is what works.
func (b *serviceBuilder) healthCheckLBs() {
	if !b.cfg.ForwardHealthCheckVIP {
		return
	}
	port := b.cfg.HealthzPort
	if hc := b.svc.Spec.HealthCheckNodePort; hc > 0 && hc <= 65535 {
		port = uint16(hc)
	}
	if port == 0 {
		return
	}
	pf := hnslb.PortMappingFlagsNone
	if b.preserveDIP && b.dsr {
		pf = hnslb.PortMappingFlagsUseMux | hnslb.PortMappingFlagsPreserveDIP
	}
	for _, fam := range families {
		if !b.ingressReady.get(fam) {
			continue
		}
		gw := b.cfg.HealthCheckGateway[fam]
		if !gw.IsValid() {
			b.problem(warn(ReasonHealthCheckGatewayUnknown,
				"forward-healthcheck-vip: no IPv%d gateway endpoint on this node, health checks on the ingress IPs are not forwarded", fam).
				because("forward-healthcheck-vip: this node has no IPv%d gateway endpoint (the host's endpoint on the network), so health checks on the load-balancer ingress IPs are not forwarded", fam))
			continue
		}
		gwEP := &endpoint{ip: gw, local: true, ready: true, serving: true, backend: intent.Backend{IP: gw.String(), Local: true}}
		f := hnslb.LoadBalancerFlagsNone
		if fam == intent.IPv6 {
			f = hnslb.LoadBalancerFlagsIPv6
		}
		for _, ip := range b.ingressIPs.get(fam) {
			key := intent.LBKey{Family: fam, VIP: ip.String(), Protocol: hnslb.ProtocolTCP, Port: port}
			b.add(key, intent.OriginHealthCheck, port, selection{endpoints: []*endpoint{gwEP}}, pf, f, hnslb.DistributionNone, b.r.Name.String()+":healthcheck")
		}
	}
}

// finish sorts the load balancers and adds what depends on the whole Service.
func (b *serviceBuilder) finish(anyPort bool) {
	r := &b.r
	slices.SortFunc(r.LBs, func(x, y intent.LB) int { return intent.CompareLBKeys(x.Key, y.Key) })
	if r.Truncated > 0 {
		b.problem(warn(ReasonBackendsTruncated,
			"more endpoints than the HNS backend cap (%d): up to %d are left out of a load balancer on this node (each node keeps its own subset)",
			b.cfg.maxBackends(), r.Truncated))
	}
	if b.zoneUnknown {
		b.problem(note(ReasonTopologyHintsIgnored,
			"topology hints ignored: node %s has no topology.kubernetes.io/zone label, so its traffic to this Service goes to endpoints in every zone (label the Node with its zone to keep that traffic in it)",
			b.cfg.NodeName).
			because("node %s has no topology.kubernetes.io/zone label, so its traffic to Services with zone hints goes to endpoints in every zone (label the Node with its zone to keep that traffic in it)", b.cfg.NodeName))
	}
	if len(b.unknownPA) > 0 {
		b.providerAddressesUnknown()
	}
	if anyPort && b.cfg.Mode == Overlay {
		for _, fam := range families {
			if b.served(fam) {
				r.ServiceVIPEndpoints = append(r.ServiceVIPEndpoints, serviceVIPEndpoint(&b.cfg, b.clusterVIP.get(fam), b.nodeIP.get(fam)))
			}
		}
	}
	if b.wantsHealthCheck() {
		switch hc := b.svc.Spec.HealthCheckNodePort; {
		case hc > 0 && hc <= 65535:
			v4, v6 := b.localReadyCounts()
			r.HealthCheck = &HealthCheck{NodePort: uint16(hc), LocalIPv4: v4, LocalIPv6: v6}
		default:
			// The API server allocates one; kube-proxy logs an error without it.
			what := "has no health-check node port"
			if hc != 0 {
				what = "has health-check node port " + strconv.Itoa(int(hc)) + ", not a valid port"
			}
			b.problem(warn(ReasonInvalidPort,
				"externalTrafficPolicy Local: the Service %s, so this node serves no health check for it and the cloud load balancer cannot tell which nodes have endpoints", what))
		}
	}
}

// noteLocalReady records the ready local endpoints of one Service port in
// one family for the health check (localReadyCounts), once the port's
// endpoints are settled: duplicates of an IP:port as the load balancers
// settle them (endpoint.rank), and only those on the internal port the load
// balancers carry.
func (b *serviceBuilder) noteLocalReady(pe *portEndpoints) {
	if !b.wantsHealthCheck() {
		return
	}
	for _, ep := range pe.endpoints {
		if !ep.local || !ep.ready || slices.Contains(b.localReady, ep.ip) {
			continue
		}
		b.localReady = append(b.localReady, ep.ip)
	}
}

// wantsHealthCheck: a LoadBalancer Service with externalTrafficPolicy Local
// has a health-check node port, which reports its local endpoints.
func (b *serviceBuilder) wantsHealthCheck() bool {
	return b.etpLocal && b.svc.Spec.Type == v1.ServiceTypeLoadBalancer
}

// localReadyCounts counts distinct ready local endpoint IPs of each served
// family, as kube-proxy counts them (EndpointsMap.LocalReadyEndpoints, one
// map per family), among the endpoints a load balancer of the Service
// carries (noteLocalReady), so the cloud is never told a node has endpoints
// it has no load balancer for: an endpoint left out of a named target port's
// slice (the pod does not expose it), or whose pod resolves the name to
// another number than the load balancers carry (a rollout changing the
// container port; kube-proxy's Linux proxiers serve each endpoint on its own
// port, HNS load balancers carry one), counts for nothing; and a terminating
// pod kept ready by publishNotReadyAddresses, whose IP a new, not yet ready
// pod holds, is not counted either.
func (b *serviceBuilder) localReadyCounts() (ipv4, ipv6 int) {
	for _, ip := range b.localReady {
		if intent.FamilyOf(ip) == intent.IPv6 {
			ipv6++
		} else {
			ipv4++
		}
	}
	return ipv4, ipv6
}

// nodePortLocal says whether a NodePort load balancer takes only local
// endpoints to work around the overlay NodePort bug (Config.NodePortLocalBackends).
// Without a local endpoint it keeps the others, which the bug may break:
// reported, as there is nothing better to program; not where no endpoint
// is usable anywhere, as then there is nothing for the bug to break.
func (b *serviceBuilder) nodePortLocal(fam intent.IPFamily, local, cluster selection) bool {
	if !b.cfg.NodePortLocalBackends || b.cfg.Mode != Overlay {
		return false
	}
	if len(local.endpoints) > 0 {
		return true
	}
	if len(cluster.endpoints) == 0 {
		return false
	}
	b.problem(warn(ReasonNodePortRemoteOnly,
		"node port: no endpoint on this node for IPv%d; this Windows build is known to break NodePort traffic forwarded to other nodes on overlay networks (workaround: externalTrafficPolicy Local, or a local endpoint)", fam))
	return false
}
