package diag

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// Report is the node's load balancers, per Service port, against what
// hnsproxy would program.
type Report struct {
	Node        string   `json:"node"`
	HNSVersion  string   `json:"hnsVersion"`
	Network     string   `json:"network"`
	NetworkType string   `json:"networkType"`
	NodeIPs     []string `json:"nodeIPs"`
	StateFile   string   `json:"stateFile,omitempty"`
	// Ownership says how owners were told apart, or why they were not.
	Ownership     string `json:"ownership"`
	LoadBalancers []Row  `json:"loadBalancers"`
	// Notes are the desired state's problems per Service and what the
	// absence of load balancers means where it is by design.
	Notes []string `json:"notes,omitempty"`
}

// States of a row.
const (
	StateOK      = "ok"      // HNS holds what hnsproxy would program
	StateMissing = "missing" // hnsproxy would program it; HNS has none on that frontend
	StateDiffers = "differs" // HNS has one on that frontend, not as hnsproxy would program it
	StateExtra   = "extra"   // HNS has it; hnsproxy would program nothing on that frontend
)

// Row is one frontend: the load balancer HNS holds and/or the one hnsproxy wants.
type Row struct {
	Service  string   `json:"service,omitempty"` // namespace/name:port
	Role     string   `json:"role,omitempty"`
	Frontend string   `json:"frontend"` // VIP:port/PROTO->backend port ([IPv6]:port); * or [::] for NodePort
	Flags    []string `json:"flags"`
	ID       string   `json:"id,omitempty"` // the HNS load balancer
	Owner    string   `json:"owner,omitempty"`
	State    string   `json:"state"`
	// Why explains a state other than ok.
	Why      []string  `json:"why,omitempty"`
	Backends []Backend `json:"backends"`
}

// BackendSpare is the state of a backend HNS uses in the place of a
// missing one (markSpares).
const BackendSpare = "spare"

// BackendOtherNetwork is a backend whose endpoint is on another HNS network
// than the one diagnosed (left from before hnsproxy moved networks).
const BackendOtherNetwork = "other-network"

// Backend is one backend of a row, by pod and node where Kubernetes knows it.
type Backend struct {
	IP    string `json:"ip"`
	Pod   string `json:"pod,omitempty"`
	Node  string `json:"node,omitempty"`
	Local bool   `json:"local"`
	// State: "" when HNS and hnsproxy agree; "missing" (wanted, not in
	// HNS's load balancer), "unwanted" (in HNS, not wanted), "spare" (in
	// HNS in the place of a missing one, over the backend cap), "no-endpoint"
	// (HNS names an endpoint ID that does not exist), "other-network" (an
	// endpoint on another HNS network than the one diagnosed, which
	// hnsproxy there does not use), "other-kind" (a remote endpoint where
	// hnsproxy uses a local one, or the reverse: BackendOtherKind).
	State string `json:"state,omitempty"`
	// EndpointID is the HNS endpoint, when HNS uses one.
	EndpointID string `json:"endpointID,omitempty"`
}

// ToCorrect counts the rows not as hnsproxy would program them: those
// missing or differing (another agent's on a tenant's frontend, which
// hnsproxy leaves alone, too), and extra load balancers not known to be another
// agent's (hnsproxy's left-overs, or any when the state file could not
// say). hnsproxy-diag exits nonzero when there are any.
func (r *Report) ToCorrect() int {
	n := 0
	for _, row := range r.LoadBalancers {
		if row.State == StateMissing || row.State == StateDiffers || (row.State == StateExtra && row.Owner != OwnerForeign) {
			n++
		}
	}
	return n
}

// Diagnose compares HNS with the desired state of the same objects.
func Diagnose(in *Inputs) *Report { return newView(in).report() }

func (v *view) report() *Report {
	in := v.in
	r := &Report{
		Node: in.Config.NodeName, HNSVersion: in.HNS.Version.String(),
		Network: in.Network.Name, NetworkType: string(in.Network.Type), StateFile: in.StateFile,
	}
	for _, ip := range in.nodeIPs() {
		r.NodeIPs = append(r.NodeIPs, ip.String())
	}
	switch {
	case in.Owned == nil:
		r.Ownership = "unknown: " + in.OwnedErr.Error()
	case in.Owned.NoState:
		r.Ownership = "none: there is no state file, so every load balancer is foreign and hnsproxy's next start takes this node over"
	case in.Owned.JournalDamage != nil:
		r.Ownership = "from the state file, with damage skipped (so hnsproxy's next start takes this node over): " + in.Owned.JournalDamage.Error()
	case in.Owned.TakesOver:
		r.Ownership = "from the state file, whose snapshot is missing or whose takeover's first sync never ended: hnsproxy's next start takes this node over"
	default:
		r.Ownership = "from the state file"
	}
	keys := make([]intent.LBKey, 0, len(v.state.LBs))
	for k := range v.state.LBs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, intent.CompareLBKeys)
	matched := map[*hnslb.LoadBalancer]bool{}
	for _, k := range keys {
		want := v.state.LBs[k]
		got := v.byKey[k]
		if got != nil {
			matched[got] = true
		}
		r.LoadBalancers = append(r.LoadBalancers, v.compare(want, got))
	}
	for i := range in.HNS.LoadBalancers {
		if lb := &in.HNS.LoadBalancers[i]; !matched[lb] {
			r.LoadBalancers = append(r.LoadBalancers, v.extra(lb))
		}
	}
	slices.SortStableFunc(r.LoadBalancers, func(a, b Row) int {
		return cmp.Or(cmp.Compare(serviceless(a), serviceless(b)), cmp.Compare(a.Service, b.Service),
			cmp.Compare(a.Role, b.Role), cmp.Compare(a.Frontend, b.Frontend))
	})
	r.Notes = v.notes()
	return r
}

// serviceless sorts rows no Service claims last.
func serviceless(r Row) int {
	if r.Service == "" {
		return 1
	}
	return 0
}

// compare is the row of a frontend hnsproxy wants; got is HNS's load
// balancer on it, or nil.
func (v *view) compare(want *intent.LB, got *hnslb.LoadBalancer) Row {
	doc := reconciler.BuildLB(want, nil)
	row := Row{Frontend: Frontend(doc), Flags: doc.FlagWords(), State: StateOK}
	row.Service, row.Role = v.frontends.servicePort(want.Key)
	if row.Service == "" {
		row.Service = want.Owner
	}
	if got == nil {
		row.State = StateMissing
		row.Backends = v.backends(want, nil)
		if unwired := v.unwired(row.Backends); len(unwired) == len(row.Backends) && len(want.Spares) == 0 {
			row.Why = []string{unwiredWhy(unwired, true)}
			return row
		}
		row.Why = []string{"hnsproxy would program this load balancer and HNS has none on its frontend: deleted behind hnsproxy's back, or not programmed yet (drift repair re-creates it within --drift-repair-period; hnsproxy's /debug/hns shows its status)"}
		row.Why = append(row.Why, v.heldAddresses(row.Backends)...)
		return row
	}
	row.ID, row.Owner, row.Flags = got.ID, v.owner(got.ID), got.FlagWords()
	row.Why = shapeDiffs(doc, got)
	row.Backends = v.backends(want, got)
	// waiting is whether all that differs waits for the CNI (unwired.go).
	waiting := len(row.Why) == 0
	if n := countState(row.Backends, "missing"); n > 0 {
		row.Why = append(row.Why, fmt.Sprintf("%d backends hnsproxy wants are not in it", n))
		row.Why = append(row.Why, v.heldAddresses(row.Backends)...)
		unwired := v.unwired(row.Backends)
		if len(unwired) > 0 {
			row.Why = append(row.Why, unwiredWhy(unwired, false))
		}
		waiting = waiting && len(unwired) == n
	}
	if n := countState(row.Backends, BackendOtherNetwork); n > 0 {
		row.Why = append(row.Why, fmt.Sprintf("%d of its backends are endpoints on another HNS network than %s, which hnsproxy does not use", n, v.in.Network.Name))
		waiting = false
	}
	if n := countState(row.Backends, BackendOtherKind); n > 0 {
		row.Why = append(row.Why, fmt.Sprintf("%d of its backends are reached through an endpoint of the other kind than hnsproxy uses at their address: "+
			"a remote endpoint for a pod of this node (on Windows Server 2019 and 2022 its traffic goes to another node), or a local endpoint for a pod of another node", n))
		waiting = false
	}
	if n := len(row.Backends) - countState(row.Backends, "") - countState(row.Backends, "missing") - countState(row.Backends, BackendSpare) - countState(row.Backends, BackendOtherNetwork) - countState(row.Backends, BackendOtherKind); n > 0 {
		row.Why = append(row.Why, fmt.Sprintf("%d of its backends are not wanted", n))
		waiting = false
	}
	if len(row.Why) > 0 {
		row.State = StateDiffers
		switch {
		case row.Owner == OwnerForeign && want.Origin.Allocated():
			row.Why = append(row.Why, "it is not hnsproxy's: it blocks the frontend, so hnsproxy deletes it and creates its own at its next sync")
		case row.Owner == OwnerForeign && v.in.Owned.TakesOver:
			row.Why = append(row.Why, "it is not hnsproxy's, and hnsproxy's next start takes this node over (see ownership): it replaces it then")
		case row.Owner == OwnerForeign:
			// hnsproxy's own rule (reconciler/foreign.go): a frontend a tenant
			// or a controller chose may be another agent's on purpose.
			row.Why = append(row.Why, "it is not hnsproxy's, and hnsproxy never deletes another agent's load balancer on an external or ingress IP: "+
				"the Service has a ForeignLoadBalancerConflict event and is not served on this frontend here until that load balancer is removed, or hnsproxy starts with a new --takeover token")
		case waiting:
		default:
			row.Why = append(row.Why, "hnsproxy corrects it at its next sync or drift repair (--drift-repair-period)")
		}
	}
	return row
}

// extra is the row of a load balancer HNS holds on a frontend hnsproxy
// would leave empty.
func (v *view) extra(lb *hnslb.LoadBalancer) Row {
	row := Row{Frontend: Frontend(lb), Flags: lb.FlagWords(), ID: lb.ID, Owner: v.owner(lb.ID), State: StateExtra}
	key, ok := reconciler.KeyOf(lb)
	if ok {
		row.Service, row.Role = v.frontends.servicePort(key)
	}
	row.Backends = v.backends(nil, lb)
	switch {
	case len(lb.PortMappings) == 0:
		row.Why = append(row.Why, "no port mappings: what HNS can leave after a failed create (kubernetes/kubernetes#141488); it may hold its frontend's port unseen")
	case !ok:
		row.Why = append(row.Why, fmt.Sprintf("a shape hnsproxy never makes (%d port mappings, %d frontend VIPs)", len(lb.PortMappings), len(lb.FrontendVIPs)))
	case v.byKey[key] != lb:
		row.Why = append(row.Why, "a second load balancer on a frontend HNS already has one on")
	}
	switch row.Owner {
	case OwnerHNSProxy:
		row.Why = append(row.Why, "hnsproxy owns it but would not program it: left over, deleted at hnsproxy's next sync (is hnsproxy running?)")
	case OwnerForeign:
		row.Why = append(row.Why, "not hnsproxy's, and hnsproxy would program nothing on its frontend: left alone (another agent's, e.g. a CNI loopback DSR load balancer, or made by hand)")
	default:
		row.Why = append(row.Why, "hnsproxy would program nothing on its frontend")
	}
	return row
}

// shapeDiffs lists how got differs from the document hnsproxy would
// write, backends aside.
func shapeDiffs(want, got *hnslb.LoadBalancer) []string {
	var out []string
	// Judged as hnsproxy judges a listing: HNS may not echo every flag it
	// was given (reconciler.EchoedFlags), nor an address's text form.
	if !reconciler.EchoedFlags(got, want) {
		out = append(out, fmt.Sprintf("flags are [%s], hnsproxy would program [%s]", strings.Join(got.FlagWords(), " "), strings.Join(want.FlagWords(), " ")))
	} else if !reconciler.SameAddress(want.SourceVIP, got.SourceVIP) {
		out = append(out, fmt.Sprintf("source VIP is %q, hnsproxy would program %q", got.SourceVIP, want.SourceVIP))
	}
	if len(got.PortMappings) == 1 && len(want.PortMappings) == 1 {
		w, g := want.PortMappings[0], got.PortMappings[0]
		if w.InternalPort != g.InternalPort {
			out = append(out, fmt.Sprintf("backend port is %d, hnsproxy would program %d", g.InternalPort, w.InternalPort))
		}
		// HNS may answer no distribution for a sticky load balancer (no
		// public capture shows one answered: sim.Echo.DropDistribution), so
		// only a distribution hnsproxy would not program is shown.
		if g.DistributionType != w.DistributionType && g.DistributionType != hnslb.DistributionNone {
			out = append(out, fmt.Sprintf("session affinity is %s, hnsproxy would program %s", g.DistributionType.Word(), w.DistributionType.Word()))
		}
	}
	return out
}

// backends merges the backends hnsproxy wants with those HNS's load
// balancer uses, by IP.
func (v *view) backends(want *intent.LB, got *hnslb.LoadBalancer) []Backend {
	byIP := map[string]*Backend{}
	wantLocal := map[string]bool{} // by IP: the kind of endpoint hnsproxy uses
	var out []*Backend
	add := func(b Backend) *Backend {
		if have := byIP[b.IP]; have != nil {
			return have
		}
		if ip, err := netip.ParseAddr(b.IP); err == nil {
			p := v.pods[ip]
			b.Pod, b.Node = p.Pod, p.Node
		}
		nb := &b
		byIP[b.IP] = nb
		out = append(out, nb)
		return nb
	}
	if want != nil {
		for _, b := range want.Backends {
			add(Backend{IP: b.IP, Local: b.Local, State: "missing"})
			wantLocal[b.IP] = v.resolvesLocal(b)
		}
	}
	if got != nil {
		ipv6 := got.IsIPv6() // by its addresses where HNS does not echo the flag
		for _, id := range got.HostComputeEndpoints {
			ip, ep, ok := v.backendIP(id, ipv6)
			if !ok {
				name := id
				if ep != nil {
					name = ep.Name
				}
				out = append(out, &Backend{IP: name, EndpointID: id, State: "no-endpoint"})
				continue
			}
			b := add(Backend{IP: ip.String(), Local: !ep.IsRemote(), State: "unwanted"})
			b.EndpointID = id
			switch {
			case v.in.Network != nil && !strings.EqualFold(ep.HostComputeNetwork, v.in.Network.ID):
				// hnsproxy resolves backends on its own network only.
				b.State = BackendOtherNetwork
			case b.State == "missing" && wantLocal[b.IP] == ep.IsRemote():
				b.State = BackendOtherKind
			case b.State == "missing":
				b.State = ""
			}
		}
	}
	if want != nil {
		markSpares(out, want.Spares)
	}
	res := make([]Backend, len(out))
	for i, b := range out {
		res[i] = *b
	}
	slices.SortStableFunc(res, func(a, b Backend) int { return intent.CompareIPs(a.IP, b.IP) })
	return res
}

// markSpares marks, among the backends HNS uses that hnsproxy does not
// want, the spares (intent.LB.Spares) the reconciler puts in the places of
// missing ones, one per missing backend: over the backend cap, the next
// ranked stands in for a backend whose endpoint HNS lacks.
func markSpares(bs []*Backend, spares []intent.Backend) {
	missing := 0
	for _, b := range bs {
		if b.State == "missing" {
			missing++
		}
	}
	if missing == 0 || len(spares) == 0 {
		return
	}
	spare := make(map[string]bool, len(spares))
	for _, s := range spares {
		spare[s.IP] = true
	}
	for _, b := range bs {
		if missing > 0 && b.State == "unwanted" && spare[b.IP] {
			b.State = BackendSpare
			missing--
		}
	}
}

func countState(bs []Backend, state string) int {
	n := 0
	for _, b := range bs {
		if b.State == state {
			n++
		}
	}
	return n
}

// Frontend is a load balancer's "VIP:port/PROTO->backend port", an IPv6
// VIP bracketed as in an address and port; a NodePort load balancer (no
// VIP) is "*" for the node's every IPv4 address and "[::]" for its every
// IPv6 one, so a dual-stack NodePort's two rows differ.
func Frontend(lb *hnslb.LoadBalancer) string {
	var pm hnslb.PortMapping
	if len(lb.PortMappings) > 0 {
		pm = lb.PortMappings[0]
	}
	vips := make([]string, len(lb.FrontendVIPs))
	for i, vip := range lb.FrontendVIPs {
		vips[i] = bracketed(vip)
	}
	vip := strings.Join(vips, ",")
	if vip == "" {
		// The family as hnsproxy reads it from HNS: source VIP, IPv6 flag.
		one := hnslb.LoadBalancer{SourceVIP: lb.SourceVIP, Flags: lb.Flags, PortMappings: []hnslb.PortMapping{pm}}
		vip = "*"
		if k, _ := reconciler.KeyOf(&one); k.Family == intent.IPv6 {
			vip = "[::]"
		}
	}
	internal := pm.InternalPort
	if internal == 0 {
		internal = pm.ExternalPort
	}
	return fmt.Sprintf("%s:%d/%s->%d", vip, pm.ExternalPort, hnslb.ProtocolName(pm.Protocol), internal)
}

// bracketed is an IPv6 address in brackets, as before a port; anything
// else as it is.
func bracketed(vip string) string {
	if strings.Contains(vip, ":") {
		return "[" + vip + "]"
	}
	return vip
}
