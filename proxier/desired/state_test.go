package desired

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/intent"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

func nsName(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

func TestClaimantOutranks(t *testing.T) {
	old := Claimant{Name: nsName("z", "z"), Created: baseTime}
	young := Claimant{Name: nsName("a", "a"), Created: baseTime.Add(time.Second)}
	a := Claimant{Name: nsName("a", "b"), Created: baseTime}
	b := Claimant{Name: nsName("b", "a"), Created: baseTime}
	c := Claimant{Name: nsName("a", "c"), Created: baseTime}
	for _, tc := range []struct {
		x, y Claimant
		want bool
	}{
		{old, young, true}, {young, old, false},
		{a, b, true}, {b, a, false}, // namespace first
		{a, c, true}, {c, a, false}, // then name
		{a, a, false},
	} {
		if got := tc.x.Outranks(tc.y); got != tc.want {
			t.Errorf("%v outranks %v = %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
}

// conflictInputs: two Services want 203.0.113.5:80; "young" is newer but
// first by name, "old" was created first.
func conflictInputs() (young, old ServiceInput) {
	young = ServiceInput{
		Service: service("a-young", clusterIPs("10.0.0.1"), externalIPs("203.0.113.5"), created(time.Hour)),
		Slices:  slicesOf(slice("a-young-1", 8080, ep("10.1.0.2"))),
	}
	old = ServiceInput{
		Service: service("b-old", clusterIPs("10.0.0.2"), externalIPs("203.0.113.5")),
		Slices:  slicesOf(slice("b-old-1", 8080, ep("10.1.0.3"))),
	}
	return young, old
}

func TestConflicts(t *testing.T) {
	young, old := conflictInputs()
	cfg := config()
	s := Compute([]ServiceInput{young, old}, cfg)
	ext := key("203.0.113.5", 80)
	if got := s.LBs[ext]; got.Owner != "ns/b-old:http" || backendIPs(*got) != "10.1.0.3" {
		t.Fatalf("the older Service must win: %+v", got)
	}
	if p := s.Conflicts(nsName("ns", "a-young")); reasons(p) != ReasonLoadBalancerConflict {
		t.Errorf("loser problems = %+v", p)
	}
	if p := s.Conflicts(nsName("ns", "b-old")); len(p) != 0 {
		t.Errorf("winner problems = %+v", p)
	}
	if len(s.LBs) != 3 {
		t.Errorf("want both ClusterIPs and one external IP, got %d", len(s.LBs))
	}
	// The loser's backends are not needed while it loses.
	if _, ok := s.RemoteEndpoints["10.1.0.2"]; !ok {
		t.Error("10.1.0.2 is still a ClusterIP backend of the loser")
	}

	// The winner goes: the loser takes over, and only that key changes.
	ch := s.Delete(nsName("ns", "b-old"))
	if !reflect.DeepEqual(ch.LBs, []intent.LBKey{key("10.0.0.2", 80), ext}) {
		t.Errorf("changed keys = %v", ch.LBs)
	}
	if !reflect.DeepEqual(ch.RemoteEndpoints, []string{"10.1.0.3"}) {
		t.Errorf("changed remote endpoints = %v", ch.RemoteEndpoints)
	}
	if !slices.Contains(ch.Conflicted, nsName("ns", "a-young")) {
		t.Errorf("conflicted = %v", ch.Conflicted)
	}
	if got := s.LBs[ext]; got.Owner != "ns/a-young:http" {
		t.Errorf("after delete: %+v", got)
	}
	if p := s.Conflicts(nsName("ns", "a-young")); len(p) != 0 {
		t.Errorf("no conflict left: %+v", p)
	}

	// Same age: first by namespace/name wins.
	young.Service.CreationTimestamp = old.Service.CreationTimestamp
	s = Compute([]ServiceInput{old, young}, cfg)
	if got := s.LBs[ext]; got.Owner != "ns/a-young:http" {
		t.Errorf("same age: %+v", got)
	}
}

func TestStateChanges(t *testing.T) {
	cfg := config()
	s := NewState(cfg)
	in := ServiceInput{Service: service("web"), Slices: slicesOf(twoEndpoints()...)}
	ch := s.Set(ForService(in, cfg))
	if !reflect.DeepEqual(ch.LBs, []intent.LBKey{key("10.0.0.1", 80)}) ||
		!reflect.DeepEqual(ch.RemoteEndpoints, []string{"10.1.0.3"}) || ch.Conflicted != nil {
		t.Errorf("first set: %+v", ch)
	}
	if want := (intent.RemoteEndpoint{IP: "10.1.0.3", MAC: "02-11-0a-01-00-03"}); s.RemoteEndpoints["10.1.0.3"] != want {
		t.Errorf("remote endpoint = %+v", s.RemoteEndpoints["10.1.0.3"])
	}
	if ch := s.Set(ForService(in, cfg)); !noChange(ch) {
		t.Errorf("same result again changed %+v", ch)
	}
	// One endpoint changes: one key, one remote endpoint in, one out.
	in.Slices = slicesOf(slice("web-1", 8080, ep("10.1.0.4"), ep("10.1.0.2", local)))
	ch = s.Set(ForService(in, cfg))
	if len(ch.LBs) != 1 || !reflect.DeepEqual(ch.RemoteEndpoints, []string{"10.1.0.3", "10.1.0.4"}) {
		t.Errorf("endpoint change: %+v", ch)
	}
	ch = s.Delete(nsName("ns", "web"))
	if len(ch.LBs) != 1 || len(s.LBs) != 0 || len(s.RemoteEndpoints) != 0 || len(s.Services) != 0 {
		t.Errorf("delete: %+v, state %+v", ch, s)
	}
	if ch := s.Delete(nsName("ns", "web")); !noChange(ch) {
		t.Errorf("deleting twice changed %+v", ch)
	}
}

func TestStateOverlayEndpoints(t *testing.T) {
	cfg := config()
	overlay(&cfg)
	// A Service whose backend is another Service's cluster IP: the
	// service-VIP endpoint takes precedence, and the source VIP is fixed.
	a := ServiceInput{Service: service("a", clusterIPs("10.0.0.1")), Slices: slicesOf(slice("a-1", 8080, ep("10.1.1.3")))}
	b := ServiceInput{Service: service("b", clusterIPs("10.0.0.2")), Slices: slicesOf(slice("b-1", 80, ep("10.0.0.1")))}
	s := Compute([]ServiceInput{a, b}, cfg)
	want := map[string]intent.RemoteEndpoint{
		"10.1.0.250": {IP: "10.1.0.250", MAC: cfg.HostMAC, Local: true},
		"10.0.0.1":   {IP: "10.0.0.1", MAC: cfg.HostMAC, ProviderAddress: nodeIPv4},
		"10.0.0.2":   {IP: "10.0.0.2", MAC: cfg.HostMAC, ProviderAddress: nodeIPv4},
		"10.1.1.3":   {IP: "10.1.1.3", MAC: "02-11-0a-01-01-03", ProviderAddress: "192.168.0.11"},
	}
	if !reflect.DeepEqual(s.RemoteEndpoints, want) {
		t.Errorf("remote endpoints:\n got %+v\nwant %+v", s.RemoteEndpoints, want)
	}
	// Without a, 10.0.0.1 is an ordinary (public) backend of b.
	ch := s.Delete(nsName("ns", "a"))
	if got := s.RemoteEndpoints["10.0.0.1"]; got.MAC != "02-11-0a-00-00-01" || got.ProviderAddress != nodeIPv4 {
		t.Errorf("10.0.0.1 after delete = %+v", got)
	}
	if !reflect.DeepEqual(ch.RemoteEndpoints, []string{"10.0.0.1", "10.1.1.3"}) {
		t.Errorf("changed = %v", ch.RemoteEndpoints)
	}
}

// A backend whose node moved to another provider address is reported,
// though its count stays the same: the reconciler must replace its remote
// endpoint. Backends kept as they were are not reported.
func TestKeptBackendWhoseAddressMovedIsReported(t *testing.T) {
	cfg := config()
	overlay(&cfg)
	web := ServiceInput{Service: service("web"), Slices: slicesOf(slice("web-1", 8080, ep("10.1.1.3"), ep("10.1.5.4")))}
	s := NewState(cfg)
	reported(t, s, func() Change { return s.Set(ForService(web, cfg)) })

	moved := cfg
	moved.RemoteSubnets = NewRemoteSubnetIndex([]RemoteSubnet{
		{Prefix: netip.MustParsePrefix("10.1.0.0/16"), ProviderAddress: addr("192.168.0.12")},
		{Prefix: netip.MustParsePrefix("10.1.1.0/24"), ProviderAddress: addr("192.168.0.99")},
	})
	ch := reported(t, s, func() Change { return s.Set(ForService(web, moved)) })
	if !slices.Equal(ch.RemoteEndpoints, []string{"10.1.1.3"}) {
		t.Errorf("reported %v, want only the backend whose node moved", ch.RemoteEndpoints)
	}
	if got := s.RemoteEndpoints["10.1.1.3"].ProviderAddress; got != "192.168.0.99" {
		t.Errorf("10.1.1.3's provider address %q, want the new one", got)
	}
	sameState(t, s, Compute([]ServiceInput{web}, moved), "after the move")
}

// randomInputs builds n Services, some conflicting on external IPs (with
// each other or with cluster IPs) and
// sharing endpoints (placed on this node, another, or none), with slices
// split so that order could matter.
func randomInputs(rng *rand.Rand, n int) []ServiceInput {
	var out []ServiceInput
	for i := range n {
		opts := []svcOpt{
			clusterIPs(fmt.Sprintf("10.0.%d.%d", i/250, i%250+1)),
			created(time.Duration(rng.IntN(3)) * time.Minute),
			nodePorts(int32(30000 + i)),
		}
		switch rng.IntN(6) {
		case 0, 1:
			opts = append(opts, externalIPs(fmt.Sprintf("203.0.113.%d", rng.IntN(4))))
		case 2: // another Service's cluster IP (or its own): refused
			j := rng.IntN(n)
			opts = append(opts, externalIPs(fmt.Sprintf("10.0.%d.%d", j/250, j%250+1)))
		}
		if rng.IntN(4) == 0 {
			opts = append(opts, etpLocal(0))
		}
		var eps1, eps2 []discoveryv1.Endpoint
		for j := range 1 + rng.IntN(6) {
			e := ep(fmt.Sprintf("10.1.%d.%d", rng.IntN(3), rng.IntN(20)+1))
			switch rng.IntN(6) {
			case 0, 1:
				e = ep(e.Addresses[0], local)
			case 2: // a slice that names no node (another's may place the address)
				e = ep(e.Addresses[0], noNode)
			}
			if rng.IntN(5) == 0 {
				e = ep(e.Addresses[0], servingTerminating)
			}
			if j%2 == 0 {
				eps1 = append(eps1, e)
			} else {
				eps2 = append(eps2, e)
			}
		}
		port := int32(8080)
		if rng.IntN(8) == 0 {
			port = 9090
		}
		out = append(out, ServiceInput{
			Service: service(fmt.Sprintf("svc-%03d", i), opts...),
			Slices:  slicesOf(slice(fmt.Sprintf("s-%d-a", i), 8080, eps1...), slice(fmt.Sprintf("s-%d-b", i), port, eps2...)),
		})
	}
	return out
}

func shuffled(rng *rand.Rand, in []ServiceInput) []ServiceInput {
	out := make([]ServiceInput, len(in))
	for i, s := range in {
		s.Slices = slices.Clone(s.Slices)
		rng.Shuffle(len(s.Slices), func(a, b int) { s.Slices[a], s.Slices[b] = s.Slices[b], s.Slices[a] })
		out[i] = s
	}
	rng.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
	return out
}

func sameState(t *testing.T, a, b *State, what string) {
	t.Helper()
	if !reflect.DeepEqual(a.LBs, b.LBs) {
		t.Fatalf("%s: load balancers differ", what)
	}
	if !reflect.DeepEqual(a.RemoteEndpoints, b.RemoteEndpoints) {
		t.Fatalf("%s: remote endpoints differ:\n%v\n%v", what, a.RemoteEndpoints, b.RemoteEndpoints)
	}
	if len(a.Services) != len(b.Services) {
		t.Fatalf("%s: %d vs %d services", what, len(a.Services), len(b.Services))
	}
	for name := range a.Services {
		if !reflect.DeepEqual(a.Services[name], b.Services[name]) {
			t.Fatalf("%s: %s differs", what, name)
		}
		if !reflect.DeepEqual(a.Conflicts(name), b.Conflicts(name)) {
			t.Fatalf("%s: %s conflicts differ", what, name)
		}
	}
}

func TestDeterminism(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cfg := config()
	overlay(&cfg)
	in := randomInputs(rng, 120)
	want := Compute(in, cfg)
	if len(want.LBs) < 120 {
		t.Fatalf("inputs too thin: %d load balancers", len(want.LBs))
	}
	for round := range 5 {
		sameState(t, want, Compute(shuffled(rng, in), cfg), fmt.Sprintf("shuffle %d", round))
	}
}

// The incremental path (Set/Delete in any order) ends where Compute does.
func TestIncrementalMatchesCompute(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cfg := config()
	overlay(&cfg)
	pool := randomInputs(rng, 60)
	s := NewState(cfg)
	live := map[string]ServiceInput{}
	for step := range 600 {
		in := pool[rng.IntN(len(pool))]
		name := in.Service.Name
		if _, ok := live[name]; ok && rng.IntN(3) == 0 {
			reported(t, s, func() Change { return s.Delete(nsName("ns", name)) })
			delete(live, name)
		} else {
			// Vary the endpoints too: a fresh variant of the same Service.
			variant := randomInputs(rand.New(rand.NewPCG(uint64(step), 9)), len(pool))[rng.IntN(len(pool))]
			in.Slices = variant.Slices
			reported(t, s, func() Change { return s.Set(ForService(in, cfg)) })
			live[name] = in
		}
		if step%50 == 49 {
			var all []ServiceInput
			for _, v := range live {
				all = append(all, v)
			}
			sameState(t, Compute(all, cfg), s, fmt.Sprintf("step %d", step))
			checkState(t, s, cfg)
		}
	}
}

// reported runs change (a Set or Delete of s) and asserts that the remote
// endpoints it reports are exactly those that appeared, went or changed:
// the reconciler hears of no other.
func reported(t *testing.T, s *State, change func() Change) Change {
	t.Helper()
	before := maps.Clone(s.RemoteEndpoints)
	ch := change()
	var want []string
	for ip, ep := range s.RemoteEndpoints {
		if was, ok := before[ip]; !ok || was != ep {
			want = append(want, ip)
		}
	}
	for ip := range before {
		if _, ok := s.RemoteEndpoints[ip]; !ok {
			want = append(want, ip)
		}
	}
	intent.SortIPs(want)
	if !slices.Equal(ch.RemoteEndpoints, want) {
		t.Fatalf("reported remote endpoints %v, want those that changed: %v", ch.RemoteEndpoints, want)
	}
	return ch
}

// noChange reports whether a Set or Delete changed nothing.
func noChange(c Change) bool {
	return len(c.LBs) == 0 && len(c.RemoteEndpoints) == 0 && len(c.Conflicted) == 0
}

// TestLBsAreTheStoredResults: State.LBs holds each load balancer where its
// Service's stored result has it, never a copy and never a result that was
// replaced, even by an equal one (it would keep the old result alive).
func TestLBsAreTheStoredResults(t *testing.T) {
	young, old := conflictInputs()
	cfg := config()
	s := NewState(cfg)
	s.Set(ForService(young, cfg))
	s.Set(ForService(old, cfg))
	if ch := s.Set(ForService(young, cfg)); len(ch.LBs) != 0 { // recomputed, equal
		t.Fatalf("an equal result changed %v", ch.LBs)
	}
	if len(s.LBs) != 3 {
		t.Fatalf("got %d load balancers, want both cluster IPs and the shared external IP", len(s.LBs))
	}
	for k, lb := range s.LBs {
		holder, _ := s.Holder(k)
		if !pointsInto(lb, s.Services[holder].LBs) {
			t.Errorf("LBs[%s] is not in %s's stored result", k, holder)
		}
	}
}

// TestASourceVIPThatIsAClusterIPKeepsItsEndpoint: the overlay source-VIP
// endpoint wins its IP over a service-VIP endpoint (package doc), so a
// cluster IP the API gives the --source-vip address never takes the
// endpoint every overlay load balancer's SNAT needs, and its Service going
// leaves it in place.
func TestASourceVIPThatIsAClusterIPKeepsItsEndpoint(t *testing.T) {
	cfg := config()
	overlay(&cfg)
	src := cfg.SourceVIP[intent.IPv4].String()
	want := intent.RemoteEndpoint{IP: src, MAC: cfg.HostMAC, Local: true}
	s := Compute([]ServiceInput{{Service: service("web", clusterIPs(src)), Slices: slicesOf(twoEndpoints()...)}}, cfg)
	if _, ok := s.LBs[key(src, 80)]; !ok {
		t.Fatalf("no load balancer on %s: %v", src, s.LBs)
	}
	if got := s.RemoteEndpoints[src]; got != want {
		t.Errorf("endpoint at the source VIP = %+v, want the source-VIP endpoint %+v", got, want)
	}
	s.Delete(nsName("ns", "web"))
	if got := s.RemoteEndpoints[src]; got != want {
		t.Errorf("after the Service went: endpoint at the source VIP = %+v, want %+v", got, want)
	}
}

// TestAServicesOwnClusterIPAsItsExternalIPIsNotRefused: an external IP is
// refused when it is another Service's cluster IP. A Service that lists
// its own (with ITP=Local and no local endpoint, the only way its external
// IP's load balancer is not the cluster IP's own) is not told that its
// cluster IP is its own, nor refused.
func TestAServicesOwnClusterIPAsItsExternalIPIsNotRefused(t *testing.T) {
	in := ServiceInput{Service: service("web", externalIPs("10.0.0.1"), itpLocal), Slices: slicesOf(slice("web-1", 8080, ep("10.1.0.3")))}
	s := Compute([]ServiceInput{in}, config())
	if p := s.Conflicts(nsName("ns", "web")); len(p) != 0 {
		t.Errorf("problems = %+v, want none", p)
	}
	if holder, ok := s.Holder(key("10.0.0.1", 80)); !ok || holder != nsName("ns", "web") {
		t.Errorf("10.0.0.1:80 held by %v (%v), want ns/web", holder, ok)
	}
}
