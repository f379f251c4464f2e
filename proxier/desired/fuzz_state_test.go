package desired

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// FuzzCompute builds a whole node's inputs (several Services, each with
// several EndpointSlices, a node config) from the fuzzer's bytes, including
// invalid addresses, ports, families and protocols and, now and then,
// thousands of endpoints. Whatever comes in, Compute must not panic and its
// output must be well-formed (see checkState); the incremental path (Set in
// any order, Delete and Set again) must agree with Compute; and slice order
// must not matter.
func FuzzCompute(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		[]byte("services and slices with every knob turned"),
		{1, 2, 1, 0, 3, 1, 0, 2, 2, 1, 1, 0, 0, 1, 2, 3, 200, 7, 1, 1, 1, 1, 9, 9, 9},
		{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3},
		{255, 254, 253, 252, 251, 250, 249, 248, 247, 246, 245, 244, 243, 242, 241, 240, 239, 238},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &fuzzGen{data: data}
		cfg := g.config()
		in := g.inputs()
		full := Compute(in, cfg)
		checkState(t, full, cfg)

		// Incremental: Set in reverse order, delete and re-add the first,
		// give it another's endpoints and take them back.
		// Each reports exactly the remote endpoints it changed.
		inc := NewState(cfg)
		for i := len(in) - 1; i >= 0; i-- {
			reported(t, inc, func() Change { return inc.Set(ForService(in[i], cfg)) })
		}
		if len(in) > 0 {
			r := ForService(in[0], cfg)
			reported(t, inc, func() Change { return inc.Delete(r.Name) })
			reported(t, inc, func() Change { return inc.Set(r) })
			reported(t, inc, func() Change { return inc.Set(ForService(in[0], cfg)) }) // recomputed, the same: a new result
		}
		if len(in) > 1 { // one Service's endpoints become another's
			other := in[1]
			other.Service = in[0].Service
			reported(t, inc, func() Change { return inc.Set(ForService(other, cfg)) })
			reported(t, inc, func() Change { return inc.Set(ForService(in[0], cfg)) })
		}
		sameState(t, inc, full, "incremental")
		checkState(t, inc, cfg)

		// Slice order never matters.
		for i := range in {
			slices.Reverse(in[i].Slices)
		}
		sameState(t, Compute(in, cfg), full, "reversed slices")
	})
}

// pointsInto reports whether lb is an element of lbs.
func pointsInto(lb *intent.LB, lbs []intent.LB) bool {
	for i := range lbs {
		if &lbs[i] == lb {
			return true
		}
	}
	return false
}

// checkState asserts what every consumer of the desired state relies on.
func checkState(t *testing.T, s *State, cfg Config) {
	t.Helper()
	limit := cfg.maxBackends()
	for k, lb := range s.LBs {
		if k != lb.Key {
			t.Fatalf("LBs[%s] holds key %s", k, lb.Key)
		}
		checkLB(t, *lb, cfg, limit)
		// Held once: in the stored result of the Service holding the key,
		// never in a result that was replaced (which it would keep alive).
		holder, _ := s.Holder(k)
		if !pointsInto(lb, s.Services[holder].LBs) {
			t.Fatalf("LBs[%s] is not %s's stored load balancer", k, holder)
		}
	}
	for name, r := range s.Services {
		if r.Name != name {
			t.Fatalf("Services[%s] is %s", name, r.Name)
		}
		for i, lb := range r.LBs {
			checkLB(t, lb, cfg, limit)
			if i > 0 && intent.CompareLBKeys(r.LBs[i-1].Key, lb.Key) >= 0 {
				t.Fatalf("%s: load balancers not sorted or duplicated: %s then %s", name, r.LBs[i-1].Key, lb.Key)
			}
		}
		for _, p := range append(r.Problems, s.Conflicts(name)...) {
			if p.Reason == "" || p.Message == "" {
				t.Fatalf("%s: problem without reason or message: %+v", name, p)
			}
		}
		for _, ep := range r.ServiceVIPEndpoints {
			if _, ok := parseIP(ep.IP); !ok {
				t.Fatalf("%s: service VIP endpoint %q", name, ep.IP)
			}
		}
		if hc := r.HealthCheck; hc != nil && hc.NodePort == 0 {
			t.Fatalf("%s: health check on node port 0", name)
		}
	}
	for ip, ep := range s.RemoteEndpoints {
		if ep.IP != ip {
			t.Fatalf("RemoteEndpoints[%s] is %s", ip, ep.IP)
		}
		if _, ok := parseIP(ip); !ok {
			t.Fatalf("remote endpoint %q", ip)
		}
	}
	for _, lb := range s.LBs {
		for _, b := range lb.Backends {
			if !b.Local {
				ep, ok := s.RemoteEndpoints[b.IP]
				if !ok {
					t.Fatalf("%s: remote backend %s has no remote endpoint", lb.Key, b.IP)
				}
				// One backend that names its node wants the endpoint outright.
				if ep.UnlessLocal && !b.NodeUnknown {
					t.Fatalf("%s: backend %+v names its node, yet its remote endpoint is wanted only unless local", lb.Key, b)
				}
			}
		}
	}
}

// checkLB: valid frontend and backends of the key's family, sorted unique
// backends within the cap, a usable port mapping and source VIP (none only
// on l2bridge for a family the node has no IP of, which has no node ports).
func checkLB(t *testing.T, lb intent.LB, cfg Config, limit int) {
	t.Helper()
	k := lb.Key
	inFamily := func(what, s string) {
		ip, ok := parseIP(s)
		if !ok || intent.FamilyOf(ip) != k.Family {
			t.Fatalf("%s: %s %q is not a valid IPv%d address", k, what, s, k.Family)
		}
	}
	if k.Family != intent.IPv4 && k.Family != intent.IPv6 {
		t.Fatalf("%s: family %d", k, k.Family)
	}
	if k.VIP != "" {
		inFamily("frontend", k.VIP)
	}
	if k.Port == 0 || lb.InternalPort == 0 || (k.Protocol != hnslb.ProtocolTCP && k.Protocol != hnslb.ProtocolUDP) {
		t.Fatalf("%s: port mapping %d→%d proto %d", k, k.Port, lb.InternalPort, k.Protocol)
	}
	if lb.SourceVIP != "" || cfg.Mode == Overlay || cfg.NodeIPs[k.Family].IsValid() {
		inFamily("source VIP", lb.SourceVIP)
	} else if k.VIP == "" {
		t.Fatalf("%s: node port without a node IP of its family", k)
	}
	if (lb.Flags&hnslb.LoadBalancerFlagsIPv6 != 0) != (k.Family == intent.IPv6) {
		t.Fatalf("%s: flags %d", k, lb.Flags)
	}
	if len(lb.Backends) == 0 || (limit > 0 && len(lb.Backends) > limit) {
		t.Fatalf("%s: %d backends (cap %d)", k, len(lb.Backends), limit)
	}
	for i, b := range lb.Backends {
		inFamily("backend", b.IP)
		if i > 0 && intent.CompareIPs(lb.Backends[i-1].IP, b.IP) >= 0 {
			t.Fatalf("%s: backends not sorted or duplicated: %s then %s", k, lb.Backends[i-1].IP, b.IP)
		}
		if !b.Local && intent.EndpointOf(b).MAC == "" {
			t.Fatalf("%s: remote backend %s gets an endpoint without a MAC", k, b.IP)
		}
	}
}

// fuzzGen turns fuzzer bytes into inputs; past the end it reads zeros, so
// every byte string is a complete (if small) input.
type fuzzGen struct {
	data []byte
	n    int // a counter for generated addresses and names
}

func (g *fuzzGen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

// pick returns 0..n-1.
func (g *fuzzGen) pick(n int) int { return int(g.byte()) % n }

func (g *fuzzGen) bool() bool { return g.byte()&1 == 1 }

// raw is a short string taken straight from the input.
func (g *fuzzGen) raw() string {
	n := g.pick(12)
	b := make([]byte, 0, n)
	for range n {
		b = append(b, g.byte())
	}
	return string(b)
}

// Addresses: valid ones of both families, the node's own, and every kind
// of address the mapping must refuse.
var fuzzIPs = []string{
	"10.0.0.1", "10.0.0.2", "10.244.1.5", "10.244.2.7", "203.0.113.9", nodeIPv4,
	"fd00::1", "fd00::2", "2001:db8::5", "fd01::7", nodeIPv6,
	"0.0.0.0", "::", "::ffff:10.0.0.1", "fe80::1%eth0", "224.0.0.1", "239.1.2.3", "127.0.0.1", "::1",
	"ff02::1", "169.254.1.1", "255.255.255.255", "1.2.3.4.5", "010.0.0.1", " 10.0.0.1", "None", "",
}

func (g *fuzzGen) ip() string {
	switch g.pick(8) {
	case 0:
		g.n++
		return fmt.Sprintf("10.%d.%d.%d", 100+g.n>>16&63, g.n>>8&255, g.n&255)
	case 1:
		g.n++
		return fmt.Sprintf("fd00::%x", g.n)
	case 2:
		return g.raw()
	}
	return fuzzIPs[g.pick(len(fuzzIPs))]
}

var fuzzPorts = []int32{80, 443, 53, 8080, 1, 65535, 0, -1, 65536, 1 << 30, 30080, 10256}

func (g *fuzzGen) port() int32 {
	if g.pick(6) == 0 {
		return int32(g.byte())<<8 | int32(g.byte())
	}
	return fuzzPorts[g.pick(len(fuzzPorts))]
}

var fuzzProtocols = []v1.Protocol{v1.ProtocolTCP, v1.ProtocolUDP, "", v1.ProtocolSCTP, "tcp"}

func (g *fuzzGen) protocol() v1.Protocol { return fuzzProtocols[g.pick(len(fuzzProtocols))] }

var fuzzPortNames = []string{"http", "", "dns", "metrics"}

func (g *fuzzGen) portName() string { return fuzzPortNames[g.pick(len(fuzzPortNames))] }

func (g *fuzzGen) optBool() *bool {
	switch g.pick(3) {
	case 0:
		return nil
	case 1:
		return ptrTo(true)
	}
	return ptrTo(false)
}

func ptrTo[T any](v T) *T { return &v }

var fuzzVersions = []hnslb.Version{{Major: 15, Minor: 5}, {Major: 9, Minor: 2}, {Major: 12}, {Major: 15, Minor: 4}, {Major: 11, Minor: 10}}

func (g *fuzzGen) config() Config {
	cfg := config()
	if g.bool() {
		cfg.Mode = Overlay
		cfg.HostMAC = "00-15-5D-00-00-01"
		cfg.SourceVIP = map[intent.IPFamily]netip.Addr{intent.IPv4: addr("10.244.1.250")}
		cfg.RemoteSubnets = NewRemoteSubnetIndex([]RemoteSubnet{
			{Prefix: netip.MustParsePrefix("10.244.2.0/24"), ProviderAddress: addr("192.168.0.11")},
			{Prefix: netip.MustParsePrefix("10.0.0.0/8"), ProviderAddress: addr("192.168.0.12")},
		})
	}
	if g.bool() {
		delete(cfg.NodeIPs, intent.IPv6)
	}
	if g.bool() { // this node's pod subnets, one family or both
		cfg.PodCIDRs = []netip.Prefix{netip.MustParsePrefix("10.244.1.0/24"), netip.MustParsePrefix("fd00:10:244:1::/64")}[:1+g.pick(2)]
	}
	cfg.Features = hnslb.FeaturesFor(fuzzVersions[g.pick(len(fuzzVersions))])
	cfg.MaxBackends = []int{0, 1, 3, 64}[g.pick(4)]
	cfg.EnableDSR = g.bool()
	cfg.ForwardHealthCheckVIP = g.bool()
	if g.bool() {
		cfg.HealthCheckGateway = map[intent.IPFamily]netip.Addr{intent.IPv4: addr("10.244.1.2"), intent.IPv6: addr("fd00::2")}
	}
	return cfg
}

func (g *fuzzGen) inputs() []ServiceInput {
	in := make([]ServiceInput, 1+g.pick(4))
	for i := range in {
		name := fmt.Sprintf("s%d", i)
		in[i] = ServiceInput{Service: g.service(name)}
		for j := range g.pick(4) {
			in[i].Slices = append(in[i].Slices, slicesOf(g.slice(fmt.Sprintf("%s-%d", name, j)))...)
		}
	}
	return in
}

var fuzzServiceTypes = []v1.ServiceType{v1.ServiceTypeClusterIP, v1.ServiceTypeNodePort, v1.ServiceTypeLoadBalancer, v1.ServiceTypeExternalName, "", "Bogus"}

func (g *fuzzGen) service(name string) *v1.Service {
	s := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: []string{"ns", "ns2"}[g.pick(2)], Name: name,
			CreationTimestamp: metav1.NewTime(baseTime.Add(time.Duration(g.pick(3)) * time.Second))},
		Spec: v1.ServiceSpec{Type: fuzzServiceTypes[g.pick(len(fuzzServiceTypes))]},
	}
	for range g.pick(4) {
		s.Spec.ClusterIPs = append(s.Spec.ClusterIPs, g.ip())
	}
	switch {
	case len(s.Spec.ClusterIPs) > 0:
		s.Spec.ClusterIP = s.Spec.ClusterIPs[0]
	case g.bool():
		s.Spec.ClusterIP = g.ip()
	}
	for range g.pick(4) {
		s.Spec.ExternalIPs = append(s.Spec.ExternalIPs, g.ip())
	}
	for range g.pick(4) {
		ing := v1.LoadBalancerIngress{IP: g.ip()}
		switch g.pick(4) {
		case 0:
			ing.IPMode = ptrTo(v1.LoadBalancerIPModeProxy)
		case 1:
			ing.IPMode = ptrTo(v1.LoadBalancerIPModeVIP)
		case 2:
			ing.Hostname = "lb.example"
		}
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, ing)
	}
	if g.bool() {
		s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = g.port()
	}
	if g.bool() {
		s.Spec.InternalTrafficPolicy = ptrTo(v1.ServiceInternalTrafficPolicyLocal)
	}
	if g.bool() {
		s.Spec.SessionAffinity = v1.ServiceAffinityClientIP
		if g.bool() {
			s.Spec.SessionAffinityConfig = &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: ptrTo(g.port())}}
		}
	}
	if g.bool() {
		s.Annotations = map[string]string{PreserveDestinationAnnotation: "true"}
	}
	for range g.pick(5) {
		s.Spec.Ports = append(s.Spec.Ports, v1.ServicePort{Name: g.portName(), Protocol: g.protocol(), Port: g.port(), NodePort: g.port()})
	}
	return s
}

var fuzzAddressTypes = []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN, ""}

func (g *fuzzGen) slice(name string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: name},
		AddressType: fuzzAddressTypes[g.pick(len(fuzzAddressTypes))],
	}
	for range g.pick(4) {
		p := discoveryv1.EndpointPort{}
		if g.pick(4) != 0 {
			p.Name = ptrTo(g.portName())
		}
		if g.pick(4) != 0 {
			p.Port = ptrTo(g.port())
		}
		if g.pick(3) != 0 {
			p.Protocol = ptrTo(g.protocol())
		}
		s.Ports = append(s.Ports, p)
	}
	n := g.pick(7)
	if g.pick(16) == 0 {
		// Huge slices: up to 5100 generated endpoints of the slice's family.
		n = 20 * int(g.byte())
	}
	nodes := []*string{nil, ptrTo(thisNode), ptrTo(otherNode), ptrTo("")}
	for i := range n {
		e := discoveryv1.Endpoint{NodeName: nodes[g.pick(len(nodes))]}
		if n > 6 {
			e.Addresses = []string{generatedIP(s.AddressType, i)}
		} else {
			for range g.pick(3) {
				e.Addresses = append(e.Addresses, g.ip())
			}
		}
		e.Conditions = discoveryv1.EndpointConditions{Ready: g.optBool(), Serving: g.optBool(), Terminating: g.optBool()}
		switch g.pick(4) {
		case 0:
			e.Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: []string{"zone-a", "zone-b"}[g.pick(2)]}}}
		case 1:
			e.Hints = &discoveryv1.EndpointHints{ForNodes: []discoveryv1.ForNode{{Name: *nodes[1+g.pick(2)]}}}
		}
		s.Endpoints = append(s.Endpoints, e)
	}
	return s
}

func generatedIP(at discoveryv1.AddressType, i int) string {
	if at == discoveryv1.AddressTypeIPv6 {
		return fmt.Sprintf("fd02::%x", i+1)
	}
	return fmt.Sprintf("10.250.%d.%d", i>>8, i&255)
}
