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

// Outranks decides who gets a key two Services both want: the older Service
// (creationTimestamp), then the first by namespace/name. It is a strict
// total order on distinct claimants, so the winner never depends on the
// order in which Services were seen.
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

type claim struct {
	who Claimant
	lb  intent.LB
}

// State is the node's whole desired state, kept up to date one Service at a
// time (Set, Delete) so the incremental path and Compute agree by
// construction. LBs and RemoteEndpoints are read-only to callers.
type State struct {
	// LBs holds, per key, the winning Service's load balancer.
	LBs map[intent.LBKey]intent.LB
	// RemoteEndpoints by IP is the node's one set of remote endpoints: remote
	// backends of LBs, overlay service-VIP endpoints and the overlay
	// source-VIP endpoint (see materialize for which wins an IP).
	RemoteEndpoints map[string]intent.RemoteEndpoint
	// Services as last given to Set, without conflict problems (see Conflicts).
	Services map[types.NamespacedName]ServiceResult

	claims map[intent.LBKey][]claim // best first
	// Reference counts derived from LBs and Services, so removing the last
	// user of a remote endpoint removes it; never maintained by hand elsewhere.
	backendRefs map[string]refEndpoint
	vipRefs     map[string]refEndpoint
	fixed       map[string]intent.RemoteEndpoint // source-VIP endpoints
}

type refEndpoint struct {
	n  int
	ep intent.RemoteEndpoint
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
		LBs:             make(map[intent.LBKey]intent.LB, lbs),
		RemoteEndpoints: make(map[string]intent.RemoteEndpoint, remotes+services),
		Services:        make(map[types.NamespacedName]ServiceResult, services),
		claims:          make(map[intent.LBKey][]claim, lbs),
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

// Set replaces one Service's result (from ForService).
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
	t := tracker{s: s, keys: make(map[intent.LBKey]bool, 2*n), ips: map[string]bool{}, svcs: map[types.NamespacedName]bool{}}
	if old, ok := s.Services[name]; ok {
		for _, lb := range old.LBs {
			t.touch(lb.Key)
			s.unclaim(lb.Key, name)
		}
		for _, ep := range old.ServiceVIPEndpoints {
			t.ref(s.vipRefs, ep, -1)
		}
		delete(s.Services, name)
	}
	if r != nil {
		s.Services[name] = *r
		who := r.Claimant()
		for _, lb := range r.LBs {
			t.touch(lb.Key)
			s.claim(lb.Key, claim{who: who, lb: lb})
		}
		for _, ep := range r.ServiceVIPEndpoints {
			t.ref(s.vipRefs, ep, 1)
		}
	}
	return t.settle()
}

func (s *State) claim(key intent.LBKey, c claim) {
	cs := s.claims[key]
	i, _ := slices.BinarySearchFunc(cs, c.who, func(x claim, w Claimant) int { return x.who.compare(w) })
	s.claims[key] = slices.Insert(cs, i, c)
}

func (s *State) unclaim(key intent.LBKey, name types.NamespacedName) {
	cs := slices.DeleteFunc(s.claims[key], func(c claim) bool { return c.who.Name == name })
	if len(cs) == 0 {
		delete(s.claims, key)
		return
	}
	s.claims[key] = cs
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
}

func (t *tracker) touch(key intent.LBKey) {
	if t.keys[key] {
		return
	}
	t.keys[key] = true
	t.conflicted(key)
}

// conflicted marks every claimant of a contested key.
func (t *tracker) conflicted(key intent.LBKey) {
	if cs := t.s.claims[key]; len(cs) > 1 {
		for _, c := range cs {
			t.svcs[c.who.Name] = true
		}
	}
}

func (t *tracker) ref(refs map[string]refEndpoint, ep intent.RemoteEndpoint, delta int) {
	t.ips[ep.IP] = true
	r := refs[ep.IP]
	r.n += delta
	if delta > 0 {
		r.ep = ep
	}
	if r.n <= 0 {
		delete(refs, ep.IP)
		return
	}
	refs[ep.IP] = r
}

// settle recomputes the winner of every touched key and reports changes.
func (t *tracker) settle() Change {
	s := t.s
	var ch Change
	for key := range t.keys {
		t.conflicted(key)
		old, had := s.LBs[key]
		cs := s.claims[key]
		if len(cs) == 0 {
			if had {
				t.backends(old, -1)
				delete(s.LBs, key)
				ch.LBs = append(ch.LBs, key)
			}
			continue
		}
		win := cs[0].lb
		if had && intent.EqualLB(&old, &win) {
			continue
		}
		if had {
			t.backends(old, -1)
		}
		t.backends(win, 1)
		s.LBs[key] = win
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
	slices.SortFunc(ch.LBs, intent.CompareLBKeys)
	slices.SortFunc(ch.RemoteEndpoints, intent.CompareIPs)
	slices.SortFunc(ch.Conflicted, func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return ch
}

func (t *tracker) backends(lb intent.LB, delta int) {
	for _, b := range lb.Backends {
		if !b.Local {
			t.ref(t.s.backendRefs, intent.EndpointOf(b), delta)
		}
	}
}

// Conflicts returns a LoadBalancerConflict problem for each key the Service
// wants but another Service holds.
func (s *State) Conflicts(name types.NamespacedName) []Problem {
	var out []Problem
	for _, lb := range s.Services[name].LBs {
		cs := s.claims[lb.Key]
		if len(cs) > 0 && cs[0].who.Name != name {
			out = append(out, warn(ReasonLoadBalancerConflict,
				"%s is also wanted by Service %s, which is older (or as old and first by name) and keeps it; this Service's load balancer for it is not programmed",
				lb.Key, cs[0].who.Name))
		}
	}
	return out
}
