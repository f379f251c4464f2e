package desired

import (
	"cmp"
	"slices"
	"time"

	"github.com/hnsproxy/hnsproxy/intent"
	"k8s.io/apimachinery/pkg/types"
)

// Claimant is a Service laying claim to load-balancer keys.
type Claimant struct {
	Name    types.NamespacedName
	Created time.Time
}

// Outranks breaks ties between claims of the same rank (see claim.before):
// the older Service (creationTimestamp), then the first by namespace/name.
// It is a strict total order on distinct claimants, so the winner never
// depends on the order in which Services were seen.
func (c Claimant) Outranks(o Claimant) bool {
	if !c.Created.Equal(o.Created) {
		return c.Created.Before(o.Created)
	}
	if c.Name.Namespace != o.Name.Namespace {
		return c.Name.Namespace < o.Name.Namespace
	}
	return c.Name.Name < o.Name.Name
}

func (c Claimant) compare(o Claimant) int {
	switch {
	case c.Outranks(o):
		return -1
	case o.Outranks(c):
		return 1
	}
	return 0
}

// claim is one Service's load balancer on a key. lb points into the
// Service's result as Set stored it (never changed in place: a Set replaces
// it whole), not a copy of it: at 10,000 Services a copy in every claim
// held 1.5 MB more.
type claim struct {
	who Claimant
	lb  *intent.LB
}

// compare orders claims on one key, best first: by the rank of who chose
// the frontend (an apiserver-allocated cluster IP or node port, then a
// controller's ingress IP, then a tenant's external IP), and only within a
// rank by age and name. So a tenant's external IP never takes a cluster
// IP's traffic, however old its Service.
func (c claim) compare(o claim) int {
	return cmp.Or(cmp.Compare(c.lb.Origin.Rank(), o.lb.Origin.Rank()), c.who.compare(o.who))
}

// State is the node's whole desired state, kept up to date one Service at a
// time (Set, Delete) so the incremental path and Compute agree by
// construction. LBs and RemoteEndpoints are read-only to callers.
type State struct {
	// LBs holds, per key, the winning Service's load balancer: in its
	// stored result (Services), not a copy, so that each load balancer is
	// held once. Read-only, as the results are.
	LBs map[intent.LBKey]*intent.LB
	// RemoteEndpoints by IP is the node's one set of remote endpoints: remote
	// backends of LBs, overlay service-VIP endpoints and the overlay
	// source-VIP endpoint (see materialize for which wins an IP).
	RemoteEndpoints map[string]intent.RemoteEndpoint
	// Services as last given to Set, without conflict problems (see Conflicts).
	Services map[types.NamespacedName]ServiceResult

	claims map[intent.LBKey][]claim // best first
	// clusterIPs maps each Service's cluster IP to the Services that have it
	// (one, unless the API is inconsistent mid-update), and externalKeys
	// each VIP some Service claims as an external IP to those keys: an
	// external IP equal to another Service's cluster IP is refused.
	clusterIPs   map[string][]types.NamespacedName
	externalKeys map[string]map[intent.LBKey]struct{}
	// Reference counts derived from LBs and Services, so removing the last
	// user of a remote endpoint removes it; never maintained by hand elsewhere.
	backendRefs map[string]refEndpoint
	vipRefs     map[string]refEndpoint
	fixed       map[string]intent.RemoteEndpoint // source-VIP endpoints

	// spare is the last replace's tracker, emptied: a cold start replaces
	// 10,000 Services, and three fresh maps each were a tenth of its garbage.
	spare *tracker
}

type refEndpoint struct {
	n  int
	ep intent.RemoteEndpoint
	// placed counts the backends of the n that name their node
	// (backendRefs only; see refBackend).
	placed int
}

// Change lists what a Set or Delete changed, sorted.
type Change struct {
	// LBs whose desired load balancer appeared, changed or disappeared.
	LBs []intent.LBKey
	// RemoteEndpoints (by IP) that appeared, changed or disappeared.
	RemoteEndpoints []string
	// Conflicted are Services whose lost keys may have changed: re-read Conflicts for them.
	Conflicted []types.NamespacedName
}

// NewState returns an empty desired state for a node (holding only the
// overlay source-VIP endpoints).
func NewState(cfg Config) *State { return newState(cfg, 0, 0, 0) }

// NewStateFor is an empty State sized for about services Services, each
// with a load balancer and a remote endpoint of its own: a cold start fills
// it one Service at a time, and growing its maps would dominate.
func NewStateFor(cfg Config, services int) *State {
	return newState(cfg, services, services, services)
}

// newState sizes the maps for a known number of services, load balancers
// and remote backends (upper bounds): growing them one entry at a time
// dominates Compute otherwise.
func newState(cfg Config, services, lbs, remotes int) *State {
	s := &State{
		LBs:             make(map[intent.LBKey]*intent.LB, lbs),
		RemoteEndpoints: make(map[string]intent.RemoteEndpoint, remotes+services),
		Services:        make(map[types.NamespacedName]ServiceResult, services),
		claims:          make(map[intent.LBKey][]claim, lbs),
		clusterIPs:      make(map[string][]types.NamespacedName, services),
		externalKeys:    map[string]map[intent.LBKey]struct{}{},
		backendRefs:     make(map[string]refEndpoint, remotes),
		vipRefs:         make(map[string]refEndpoint, services),
		fixed:           map[string]intent.RemoteEndpoint{},
	}
	for _, ep := range SourceVIPEndpoints(cfg) {
		s.fixed[ep.IP] = ep
		s.RemoteEndpoints[ep.IP] = ep
	}
	return s
}

// Compute is the whole node's desired state from scratch.
func Compute(svcs []ServiceInput, cfg Config) *State {
	results := make([]ServiceResult, 0, len(svcs))
	lbs, remotes := 0, 0
	for _, in := range svcs {
		if in.Service != nil {
			r := ForService(in, cfg)
			lbs += len(r.LBs)
			if len(r.LBs) > 0 {
				remotes += len(r.LBs[0].Backends) // most share their backends
			}
			results = append(results, r)
		}
	}
	s := newState(cfg, len(results), lbs, remotes)
	for i := range results {
		s.Set(results[i])
	}
	return s
}

// Set replaces one Service's result (from ForService). The State keeps
// r's slices: the caller must not change them afterwards.
func (s *State) Set(r ServiceResult) Change {
	return s.replace(r.Name, &r)
}

// Delete forgets a Service.
func (s *State) Delete(name types.NamespacedName) Change {
	return s.replace(name, nil)
}

func (s *State) replace(name types.NamespacedName, r *ServiceResult) Change {
	n := 0
	if r != nil {
		n = len(r.LBs)
	}
	t := s.tracker(2 * n)
	defer s.release(t)
	var oldIPs []string
	if old, ok := s.Services[name]; ok {
		for _, lb := range old.LBs {
			t.touch(lb.Key)
			s.unclaim(lb.Key, name)
		}
		for _, ep := range old.ServiceVIPEndpoints {
			t.ref(s.vipRefs, ep, -1)
		}
		oldIPs = old.ClusterIPs
		delete(s.Services, name)
	}
	var newIPs []string
	if r != nil {
		s.Services[name] = *r
		who := r.Claimant()
		for i := range r.LBs {
			lb := &r.LBs[i]
			t.touch(lb.Key)
			s.claim(lb.Key, claim{who: who, lb: lb})
		}
		for _, ep := range r.ServiceVIPEndpoints {
			t.ref(s.vipRefs, ep, 1)
		}
		newIPs = r.ClusterIPs
	}
	if !slices.Equal(oldIPs, newIPs) {
		s.moveClusterIPs(t, name, oldIPs, newIPs)
	}
	return t.settle()
}

func (s *State) claim(key intent.LBKey, c claim) {
	cs := s.claims[key]
	i, _ := slices.BinarySearchFunc(cs, c, claim.compare)
	s.claims[key] = slices.Insert(cs, i, c)
	if c.lb.Origin.TenantChosen() {
		keys := s.externalKeys[key.VIP]
		if keys == nil {
			keys = map[intent.LBKey]struct{}{}
			s.externalKeys[key.VIP] = keys
		}
		keys[key] = struct{}{}
	}
}

func (s *State) unclaim(key intent.LBKey, name types.NamespacedName) {
	cs := slices.DeleteFunc(s.claims[key], func(c claim) bool { return c.who.Name == name })
	if !slices.ContainsFunc(cs, func(c claim) bool { return c.lb.Origin.TenantChosen() }) {
		if keys := s.externalKeys[key.VIP]; keys != nil {
			delete(keys, key)
			if len(keys) == 0 {
				delete(s.externalKeys, key.VIP)
			}
		}
	}
	if len(cs) == 0 {
		delete(s.claims, key)
		return
	}
	s.claims[key] = cs
}

// moveClusterIPs updates the cluster IP index for one Service and touches
// the external-IP keys on the IPs it gained or lost, whose refusal may change.
func (s *State) moveClusterIPs(t *tracker, name types.NamespacedName, oldIPs, newIPs []string) {
	for _, ip := range oldIPs {
		owners := slices.DeleteFunc(s.clusterIPs[ip], func(n types.NamespacedName) bool { return n == name })
		if len(owners) == 0 {
			delete(s.clusterIPs, ip)
		} else {
			s.clusterIPs[ip] = owners
		}
	}
	for _, ip := range newIPs {
		s.clusterIPs[ip] = append(s.clusterIPs[ip], name)
	}
	for _, ip := range append(slices.Clip(oldIPs), newIPs...) {
		for key := range s.externalKeys[ip] {
			t.touch(key)
		}
	}
}

// refusedBy names the Service whose cluster IP c's external IP is, if any:
// such a claim never wins its key.
func (s *State) refusedBy(c *claim) (types.NamespacedName, bool) {
	if !c.lb.Origin.TenantChosen() {
		return types.NamespacedName{}, false
	}
	for _, n := range s.clusterIPs[c.lb.Key.VIP] {
		if n != c.who.Name {
			return n, true
		}
	}
	return types.NamespacedName{}, false
}

// winner is the best claim on key that is not refused.
func (s *State) winner(key intent.LBKey) (*claim, bool) {
	cs := s.claims[key]
	for i := range cs {
		if _, refused := s.refusedBy(&cs[i]); !refused {
			return &cs[i], true
		}
	}
	return nil, false
}

// materialize is the remote endpoint wanted at ip: the source VIP first,
// then a service VIP, then a backend.
func (s *State) materialize(ip string) (intent.RemoteEndpoint, bool) {
	if ep, ok := s.fixed[ip]; ok {
		return ep, true
	}
	if r, ok := s.vipRefs[ip]; ok {
		return r.ep, true
	}
	if r, ok := s.backendRefs[ip]; ok {
		return r.ep, true
	}
	return intent.RemoteEndpoint{}, false
}

// tracker collects one replace's effects.
type tracker struct {
	s    *State
	keys map[intent.LBKey]bool
	ips  map[string]bool
	svcs map[types.NamespacedName]bool
	// kept is rebackends' scratch: the old load balancer's remote
	// backends not yet found in the new one. Empty between calls; used
	// only for load balancers of at most keptReused backends.
	kept map[intent.Backend]int
}

// tracker returns an empty tracker for about keys keys.
func (s *State) tracker(keys int) *tracker {
	if t := s.spare; t != nil {
		s.spare = nil
		return t
	}
	return &tracker{s: s, keys: make(map[intent.LBKey]bool, keys), ips: map[string]bool{}, svcs: map[types.NamespacedName]bool{}, kept: map[intent.Backend]int{}}
}

// release keeps t for the next replace unless it grew large: clearing a
// map costs its capacity, which never shrinks.
func (s *State) release(t *tracker) {
	const small = 64
	if len(t.keys) > small || len(t.ips) > small || len(t.svcs) > small {
		return
	}
	clear(t.keys)
	clear(t.ips)
	clear(t.svcs)
	s.spare = t
}

func (t *tracker) touch(key intent.LBKey) {
	if t.keys[key] {
		return
	}
	t.keys[key] = true
	t.conflicted(key)
}

// conflicted marks every claimant of a contested key (one with a rival or
// an external IP that may be refused).
func (t *tracker) conflicted(key intent.LBKey) {
	if cs := t.s.claims[key]; len(cs) > 1 || len(cs) == 1 && cs[0].lb.Origin.TenantChosen() {
		for _, c := range cs {
			t.svcs[c.who.Name] = true
		}
	}
}

// ref counts ep once more in refs (delta 1) or once less (-1). Only an
// endpoint that appears, goes or changes is marked for settle: a
// load balancer replaced by one with mostly the same backends (a
// readiness flip, a scale) counts each kept backend once more, then once
// less, and settle's look at each kept IP was most of its cost.
func (t *tracker) ref(refs map[string]refEndpoint, ep intent.RemoteEndpoint, delta int) {
	r, had := refs[ep.IP]
	r.n += delta
	if r.n <= 0 {
		delete(refs, ep.IP)
		t.ips[ep.IP] = true
		return
	}
	if delta > 0 && (!had || r.ep != ep) {
		r.ep = ep
		t.ips[ep.IP] = true
	}
	refs[ep.IP] = r
}

// refBackend is ref for a remote backend's endpoint, made (its MAC
// conjured) only when it is new or its provider address moved: a backend
// is counted once per load balancer that uses it. The endpoint is wanted
// only while no local endpoint holds the address (UnlessLocal) as long as
// every backend counted names no node: one Service's slice that places the
// pod on another node asks for it outright.
func (t *tracker) refBackend(b intent.Backend, delta int) {
	refs := t.s.backendRefs
	r, had := refs[b.IP]
	r.n += delta
	if !b.NodeUnknown {
		r.placed += delta
	}
	if r.n <= 0 {
		delete(refs, b.IP)
		t.ips[b.IP] = true
		return
	}
	ep := r.ep
	if !had || delta > 0 && r.ep.ProviderAddress != b.ProviderAddress {
		ep = intent.EndpointOf(b)
	}
	ep.UnlessLocal = r.placed == 0
	if !had || ep != r.ep {
		r.ep = ep
		t.ips[b.IP] = true
	}
	refs[b.IP] = r
}

// settle recomputes the winner of every touched key and reports changes.
func (t *tracker) settle() Change {
	s := t.s
	var ch Change
	for key := range t.keys {
		t.conflicted(key)
		old, had := s.LBs[key]
		win, ok := s.winner(key)
		if !ok {
			if had {
				t.backends(old, -1)
				delete(s.LBs, key)
				ch.LBs = append(ch.LBs, key)
			}
			continue
		}
		if had && intent.EqualLB(old, win.lb) {
			s.LBs[key] = win.lb // the same, but the old result may be gone
			continue
		}
		if had {
			t.rebackends(old, win.lb)
		} else {
			t.backends(win.lb, 1)
		}
		s.LBs[key] = win.lb
		ch.LBs = append(ch.LBs, key)
	}
	for ip := range t.ips {
		now, ok := s.materialize(ip)
		was, had := s.RemoteEndpoints[ip] // still the state before this change
		switch {
		case ok && (!had || now != was):
			s.RemoteEndpoints[ip] = now
		case !ok && had:
			delete(s.RemoteEndpoints, ip)
		default:
			continue
		}
		ch.RemoteEndpoints = append(ch.RemoteEndpoints, ip)
	}
	for n := range t.svcs {
		ch.Conflicted = append(ch.Conflicted, n)
	}
	intent.SortLBKeys(ch.LBs)
	intent.SortIPs(ch.RemoteEndpoints)
	slices.SortFunc(ch.Conflicted, func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return ch
}

// backends counts the remote endpoints lb may use: its backends and its
// spares (a spare must be realizable the moment it stands in).
func (t *tracker) backends(lb *intent.LB, delta int) {
	for _, bs := range [][]intent.Backend{lb.Backends, lb.Spares} {
		for _, b := range bs {
			if !b.Local {
				t.refBackend(b, delta)
			}
		}
	}
}

// rebackends moves the counts of a load balancer replaced by lb from old's
// remote endpoints to lb's, counting only the backends one has and the
// other lacks: each count is a look-up in the map of every remote
// endpoint, so a flip in a Service of n backends made 2n of them per load
// balancer. The new are counted before the old are let go, so a backend
// that moves between backends and spares never drops to zero.
func (t *tracker) rebackends(old, lb *intent.LB) {
	kept := t.kept
	if n := len(old.Backends) + len(old.Spares); n > keptReused {
		kept = make(map[intent.Backend]int, n) // t.kept stays small: see release
	}
	for _, bs := range [][]intent.Backend{old.Backends, old.Spares} {
		for _, b := range bs {
			if !b.Local {
				kept[b]++
			}
		}
	}
	for _, bs := range [][]intent.Backend{lb.Backends, lb.Spares} {
		for _, b := range bs {
			switch {
			case b.Local:
			case kept[b] > 1:
				kept[b]--
			case kept[b] == 1:
				delete(kept, b)
			default:
				t.refBackend(b, 1)
			}
		}
	}
	for b, n := range kept {
		for range n {
			t.refBackend(b, -1)
		}
		delete(kept, b)
	}
}

// keptReused is the most backends rebackends counts in the tracker's own
// scratch map: a map keeps its largest size, and clearing or ranging over
// it costs that size.
const keptReused = 128

// Holder is the Service whose load balancer the key carries, if any.
func (s *State) Holder(key intent.LBKey) (types.NamespacedName, bool) {
	if win, ok := s.winner(key); ok {
		return win.who.Name, true
	}
	return types.NamespacedName{}, false
}

// sameBut reports whether the winner's load balancer is the one the loser
// wants, but for whose it is: then the loser loses nothing. Services that
// share an ingress IP each want its health-check forwarding
// (--forward-healthcheck-vip) to the same gateway endpoint, and winkernel
// reuses the identical load balancer it made for the first without a word.
func sameBut(win, lose *intent.LB) bool {
	same := *lose
	same.Owner, same.Origin = win.Owner, win.Origin
	return intent.EqualLB(win, &same)
}

// Conflicts returns, for the Service, an ExternalIPRefused problem for each
// external IP that is another Service's cluster IP, and a
// LoadBalancerConflict problem for each other key another Service holds
// with a load balancer other than the one this Service wants.
func (s *State) Conflicts(name types.NamespacedName) []Problem {
	var out []Problem
	refused := map[string]bool{}
	res := s.Services[name]
	for i := range res.LBs {
		lb := &res.LBs[i]
		mine := claim{who: res.Claimant(), lb: lb}
		if victim, ok := s.refusedBy(&mine); ok {
			if !refused[lb.Key.VIP] {
				refused[lb.Key.VIP] = true
				out = append(out, warn(ReasonExternalIPRefused,
					"external IP %s is the cluster IP of Service %s; refused on every port (an external IP may never take a cluster IP's traffic)",
					lb.Key.VIP, victim))
			}
			continue
		}
		win, ok := s.winner(lb.Key)
		if !ok || win.who.Name == name || sameBut(win.lb, lb) {
			continue
		}
		why := "which is older (or as old and first by name)"
		if win.lb.Origin.Rank() < lb.Origin.Rank() {
			why = "whose " + win.lb.Origin.String() + " outranks an " + lb.Origin.String()
		}
		out = append(out, warn(ReasonLoadBalancerConflict,
			"%s (this Service's %s) is also wanted by Service %s, %s, which keeps it; this Service's load balancer for it is not programmed",
			lb.Key, lb.Origin, win.who.Name, why))
	}
	return out
}
