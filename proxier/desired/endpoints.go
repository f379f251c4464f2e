package desired

import (
	"cmp"
	"net/netip"
	"slices"
	"unique"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/internal/kubeip"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// endpoint is one EndpointSlice endpoint as the mapping sees it. Everything
// that depends only on the address (backend form, rendezvous weight) is
// computed once per slice endpoint, not once per load balancer.
type endpoint struct {
	ip          netip.Addr
	local       bool
	ready       bool
	serving     bool
	terminating bool
	zoneHints   []string
	nodeHints   []string

	backend intent.Backend
	weight  uint64
	// remoteNode: a remote endpoint that is another node's own address
	// (host-network pod); noPA: a remote endpoint outside every remote
	// subnet. Both make overlay load balancers use the node IP as source VIP.
	remoteNode bool
	noPA       bool
}

// servingTerminating is KEP-1669's fallback class.
func (e *endpoint) servingTerminating() bool { return e.serving && e.terminating }

// rank orders duplicates of one IP:port. One that is not terminating beats
// one that is, as in kube-proxy from v1.36 (kubernetes/kubernetes#135593):
// the pod network may give a terminating pod's IP to a new pod before the
// old Pod object is gone, and traffic belongs to the new one even before it
// is ready. Then ready beats not ready, serving beats not serving, and
// local beats remote.
func (e *endpoint) rank() int {
	r := 0
	if !e.terminating {
		r = 8
	}
	switch {
	case e.ready:
		r += 4
	case e.serving:
		r += 2
	}
	if e.local {
		r++
	}
	return r
}

// parsedSlice is an EndpointSlice with its endpoints checked and parsed.
type parsedSlice struct {
	family    intent.IPFamily
	ports     []discoveryv1.EndpointPort
	endpoints []endpoint
}

// portFor returns the slice's port number for a Service port, matched by
// name and protocol as kube-proxy does. ok is false when the slice does not
// carry the port; valid is false when it carries it without a usable number.
func (s *parsedSlice) portFor(sp *v1.ServicePort) (port uint16, ok, valid bool) {
	want := sp.Protocol
	if want == "" {
		want = v1.ProtocolTCP // the API default
	}
	for _, p := range s.ports {
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		proto := v1.ProtocolTCP
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		if name != sp.Name || proto != want {
			continue
		}
		if p.Port == nil || *p.Port < 1 || *p.Port > 65535 {
			return 0, true, false
		}
		return uint16(*p.Port), true, true
	}
	return 0, false, false
}

// parseSlices checks and parses a Service's slices in name order (so that
// duplicate handling never depends on informer order), into buf. It
// returns how many endpoints had an unusable address.
func parseSlices(in []*EndpointSlice, cfg *Config, buf *buffers) (out []parsedSlice, invalid int) {
	sorted := append(grown(buf.sorted, len(in)), in...)
	buf.sorted = sorted
	total := 0
	for _, s := range in {
		if s != nil {
			total += len(s.Endpoints)
		}
	}
	// One array for every slice's endpoints, sized first: each parsed
	// slice's endpoints are a window of it, and a later append must not
	// move the earlier windows.
	all := grown(buf.endpoints, total)
	out = grown(buf.slices, len(in))
	slices.SortFunc(sorted, func(a, b *EndpointSlice) int {
		if a == nil || b == nil {
			return cmp.Compare(boolInt(a != nil), boolInt(b != nil))
		}
		return cmp.Compare(a.Name, b.Name)
	})
	node := nodeHash(cfg.NodeName)
	var self unique.Handle[string] // zero: no endpoint is local
	if cfg.NodeName != "" {
		self = unique.Make(cfg.NodeName)
	}
	for _, s := range sorted {
		if s == nil || s.Family == 0 { // FQDN slices carry no addresses a proxy can use
			continue
		}
		fam := s.Family
		start := len(all)
		for i := range s.Endpoints {
			e := &s.Endpoints[i]
			if e.Address == "" {
				invalid++
				continue
			}
			ip, ok := kubeip.ParseAddr(e.Address)
			if !ok || ip.Is4In6() || intent.FamilyOf(ip) != fam || ip.IsUnspecified() {
				invalid++
				continue
			}
			ep := endpoint{
				ip:          ip,
				local:       self != (unique.Handle[string]{}) && e.Node == self,
				ready:       e.Ready,
				serving:     e.Serving,
				terminating: e.Terminating,
				weight:      rendezvousWeight(node, ip),
			}
			if h := e.Hints; h != nil {
				for _, z := range h.ForZones {
					ep.zoneHints = append(ep.zoneHints, z.Name)
				}
				for _, n := range h.ForNodes {
					ep.nodeHints = append(ep.nodeHints, n.Name)
				}
			}
			nodeUnknown := e.Node == (unique.Handle[string]{})
			// A pod address of this node its slice places on no node is
			// served by the pod's local endpoint alone, left out while the
			// CNI has none: a remote endpoint there reaches no pod, and on
			// Windows Server 2025 keeps the CNI from wiring the next pod
			// IPAM gives the address. The traffic policies still count it
			// remote (ep.local), as kube-proxy does.
			local := ep.local || nodeUnknown && cfg.ownsPodAddress(ip)
			ep.backend = intent.Backend{IP: canonical(e.Address, ip), Local: local, NodeUnknown: nodeUnknown && !local}
			if !local {
				if cfg.Mode == Overlay {
					if n, found := cfg.RemoteSubnets.nodeOf(ip); found {
						ep.remoteNode = n.pa == ip
						ep.backend.ProviderAddress = n.text
					} else {
						// winkernel: outside every remote subnet means a
						// public IP, reached through this node. Not a pod
						// of this node its slice places on no node:
						// winkernel serves that one by its local endpoint,
						// as the reconciler does (intent.Backend.NodeUnknown),
						// and the load balancer keeps the source VIP.
						ep.noPA = !nodeUnknown || !cfg.inPodCIDRs(ip)
						if pa := cfg.NodeIPs[fam]; pa.IsValid() {
							ep.backend.ProviderAddress = cfg.RemoteSubnets.text(pa)
						}
					}
				}
			}
			all = append(all, ep)
		}
		out = append(out, parsedSlice{family: fam, ports: s.Ports, endpoints: all[start:len(all):len(all)]})
	}
	buf.endpoints, buf.slices = all, out
	return out, invalid
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// portEndpoints are the endpoints behind one Service port in one family.
type portEndpoints struct {
	// port is the one internal port the load balancers carry.
	port      uint16
	endpoints []*endpoint // unique IPs, sorted by IP
	// mixedDropped counts usable endpoints left out for having another port.
	mixedDropped int
	// badPort counts endpoints whose slice gives the port without a number.
	badPort int
}

// endpointsForPort gathers, de-duplicates and port-groups one Service
// port's endpoints of one family.
func endpointsForPort(parsed []parsedSlice, fam intent.IPFamily, sp *v1.ServicePort, buf *buffers) portEndpoints {
	var res portEndpoints
	n := 0
	for i := range parsed {
		n += len(parsed[i].endpoints)
	}
	all := grown(buf.picks, n)
	for i := range parsed {
		ps := &parsed[i]
		if ps.family != fam {
			continue
		}
		port, ok, valid := ps.portFor(sp)
		if !ok {
			continue
		}
		if !valid {
			res.badPort += len(ps.endpoints)
			continue
		}
		for j := range ps.endpoints {
			all = append(all, portPick{&ps.endpoints[j], port, len(all)})
		}
	}
	buf.picks = all // before de-duplication shortens it: put clears what was used
	if len(all) == 0 {
		return res
	}
	all = dedupePicks(all)
	res.port = choosePort(all)
	res.endpoints = make([]*endpoint, 0, len(all))
	for _, p := range all {
		if p.port == res.port {
			res.endpoints = append(res.endpoints, p.ep)
		} else if p.ep.ready || p.ep.serving {
			res.mixedDropped++
		}
	}
	return res
}

// dedupePicks keeps one pick per IP and port, the best ranked (the first
// seen among equals), sorted by IP: sorting a Service's few endpoints costs
// less than indexing them in a map.
func dedupePicks(all []portPick) []portPick {
	slices.SortFunc(all, func(a, b portPick) int {
		return cmp.Or(a.ep.ip.Compare(b.ep.ip), cmp.Compare(a.port, b.port), cmp.Compare(a.seen, b.seen))
	})
	out := all[:1]
	for _, p := range all[1:] {
		last := &out[len(out)-1]
		if p.ep.ip != last.ep.ip || p.port != last.port {
			out = append(out, p)
		} else if p.ep.rank() > last.ep.rank() {
			last.ep = p.ep
		}
	}
	return out
}

// portPick is an endpoint with the port one slice gives it for a Service port.
type portPick struct {
	ep   *endpoint
	port uint16
	seen int // order of appearance: the first of equally ranked duplicates wins
}

func compareEndpointIPs(a, b *endpoint) int { return a.ip.Compare(b.ip) }

// choosePort picks the one internal port a load balancer can carry when a
// named target port resolves differently per endpoint: the port with the
// most ready endpoints, then the most serving ones, then the lowest.
func choosePort(eps []portPick) uint16 {
	first := eps[0].port
	mixed := false
	for _, ep := range eps[1:] {
		if ep.port != first {
			mixed = true
			break
		}
	}
	if !mixed {
		return first
	}
	type score struct{ ready, serving int }
	scores := map[uint16]score{}
	for _, ep := range eps {
		s := scores[ep.port]
		if ep.ep.ready {
			s.ready++
		}
		if ep.ep.serving {
			s.serving++
		}
		scores[ep.port] = s
	}
	best, bestScore := uint16(0), score{-1, -1}
	for p, s := range scores {
		if s.ready > bestScore.ready ||
			(s.ready == bestScore.ready && s.serving > bestScore.serving) ||
			(s.ready == bestScore.ready && s.serving == bestScore.serving && p < best) {
			best, bestScore = p, s
		}
	}
	return best
}

// canonical is ip's text: as given for IPv4 without leading zeros (netip's
// only form, the canonical one), saving an allocation per endpoint;
// formatted anew for IPv6, which has several, and for a legacy IPv4 text
// with leading zeros (kubeip.ParseAddr).
func canonical(given string, ip netip.Addr) string {
	if ip.Is4() && !leadingZero(given) {
		return given
	}
	return ip.String()
}

// leadingZero reports whether a part of the dotted IPv4 text s starts with
// a 0 followed by another digit.
func leadingZero(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '0' && (i == 0 || s[i-1] == '.') && s[i+1] != '.' {
			return true
		}
	}
	return false
}
