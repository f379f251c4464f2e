//go:build linux

package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

var (
	webKey = intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.10", Protocol: hnslb.ProtocolTCP, Port: 80}
	webLB  = intent.LB{
		Key: webKey, SourceVIP: "192.168.50.11", InternalPort: 8080, Flags: hnslb.LoadBalancerFlagsDSR,
		Backends: []intent.Backend{{IP: "10.244.1.10", Local: true}, {IP: "10.244.2.10"}},
		Owner:    "soak/web:p0",
	}
)

// realized is HNS holding webLB as hnsproxy would program it, a pod's
// endpoint, the remote endpoint and a foreign load balancer.
func realized() *hnslb.Snapshot {
	return &hnslb.Snapshot{
		Endpoints: []hnslb.Endpoint{
			{ID: "pod", IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.10"}}},
			{ID: "remote", IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.2.10"}}, Flags: hnslb.EndpointFlagsRemoteEndpoint},
		},
		LoadBalancers: []hnslb.LoadBalancer{
			{ID: "web", HostComputeEndpoints: []string{"remote", "pod"}, SourceVIP: "192.168.50.11", FrontendVIPs: []string{"10.96.0.10"},
				PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 8080, ExternalPort: 80}}, Flags: hnslb.LoadBalancerFlagsDSR},
			{ID: "other", HostComputeEndpoints: []string{"pod"}, FrontendVIPs: []string{"203.0.113.10"},
				PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 9000, ExternalPort: 9999}}},
		},
	}
}

func wanted() expectation {
	web := webLB
	return expectation{
		state: &desired.State{
			LBs:             map[intent.LBKey]*intent.LB{webKey: &web},
			RemoteEndpoints: map[string]intent.RemoteEndpoint{"10.244.2.10": {IP: "10.244.2.10"}},
		},
		clusterIPs: map[string]string{"10.96.0.10": "soak/web"},
	}
}

// heldKey is the planted foreign load balancer's frontend.
var heldKey = intent.LBKey{Family: intent.IPv4, VIP: "203.0.113.10", Protocol: hnslb.ProtocolTCP, Port: 9999}

func foreign() foreignSet {
	return foreignSet{LBs: map[string]bool{"other": true}, Endpoints: map[string]bool{"pod": true}}
}

func TestCompare(t *testing.T) {
	cases := []struct {
		name   string
		change func(*hnslb.Snapshot, expectation)
		want   string // "" clean, else the kind and a part of the line
	}{
		{"as desired", func(*hnslb.Snapshot, expectation) {}, ""},
		{"a load balancer nothing wants", func(_ *hnslb.Snapshot, w expectation) { delete(w.state.LBs, webKey) }, "leaked: load balancer web"},
		{"a remote endpoint nothing wants", func(_ *hnslb.Snapshot, w expectation) { clear(w.state.RemoteEndpoints) }, "leaked: endpoint remote"},
		{"a missing load balancer", func(s *hnslb.Snapshot, _ expectation) { s.LoadBalancers = s.LoadBalancers[1:] }, "missing: load balancer 10.96.0.10:80/tcp"},
		{"a missing remote endpoint", func(s *hnslb.Snapshot, _ expectation) { s.Endpoints = s.Endpoints[:1] }, "missing: remote endpoint 10.244.2.10"},
		{"a backend too few", func(s *hnslb.Snapshot, _ expectation) { s.LoadBalancers[0].HostComputeEndpoints = []string{"pod"} }, "wrong: load balancer web"},
		{"another internal port", func(s *hnslb.Snapshot, _ expectation) { s.LoadBalancers[0].PortMappings[0].InternalPort = 8081 }, "internal port 8081"},
		{"flags differ", func(s *hnslb.Snapshot, _ expectation) { s.LoadBalancers[0].Flags = 0 }, "flags 0, want 1"},
		{"affinity differs", func(s *hnslb.Snapshot, _ expectation) {
			s.LoadBalancers[0].PortMappings[0].DistributionType = hnslb.DistributionSourceIP
		}, "distribution"},
		{"two for one key", func(s *hnslb.Snapshot, _ expectation) {
			dup := s.LoadBalancers[0]
			dup.ID = "dup"
			s.LoadBalancers = append(s.LoadBalancers, dup)
		}, "wrong: load balancer"},
		{"a tenant's external IP on the foreign frontend: held, not missing", func(_ *hnslb.Snapshot, w expectation) {
			w.state.LBs[heldKey] = &intent.LB{Key: heldKey, Owner: "soak/tenant:foreign", Origin: intent.OriginExternalIP}
		}, ""},
		{"a cluster IP on the foreign frontend: missing (hnsproxy replaces leftovers there)", func(_ *hnslb.Snapshot, w expectation) {
			w.state.LBs[heldKey] = &intent.LB{Key: heldKey, Owner: "soak/web2:p0", Origin: intent.OriginClusterIP}
		}, "missing: load balancer 203.0.113.10:9999/tcp"},
		{"the agent's frontend held by what its failed create left: held, not missing", func(s *hnslb.Snapshot, w expectation) {
			s.LoadBalancers[1].PortMappings = nil
			w.state.LBs[heldKey] = &intent.LB{Key: heldKey, Owner: "soak/tenant:foreign", Origin: intent.OriginExternalIP}
		}, ""},
		{"another port on the VIP of what the agent's failed create left: missing", func(s *hnslb.Snapshot, w expectation) {
			s.LoadBalancers[1].PortMappings = nil
			other := heldKey
			other.Port = 8000
			w.state.LBs[other] = &intent.LB{Key: other, Owner: "soak/tenant:p8000", Origin: intent.OriginExternalIP}
		}, "missing: load balancer 203.0.113.10:8000/tcp"},
		{"a cluster IP carrying another Service's load balancer", func(_ *hnslb.Snapshot, w expectation) {
			lb := webLB
			lb.Owner = "soak/tenant:p0"
			w.state.LBs[webKey] = &lb
		}, "cluster IP of soak/web taken by soak/tenant:p0"},
		{"a foreign load balancer deleted", func(s *hnslb.Snapshot, _ expectation) { s.LoadBalancers = s.LoadBalancers[:1] }, "foreign deleted: load balancer other"},
		{"an overlay remote endpoint at another node's provider address", func(s *hnslb.Snapshot, w expectation) {
			w.state.RemoteEndpoints["10.244.2.10"] = intent.RemoteEndpoint{IP: "10.244.2.10", ProviderAddress: "192.168.50.12"}
			s.Endpoints[1].Policies = []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
				hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: "192.168.50.13"})}
		}, `wrong: endpoint remote 10.244.2.10: provider address "192.168.50.13", want "192.168.50.12"`},
		{"an overlay remote endpoint at its node's provider address", func(s *hnslb.Snapshot, w expectation) {
			w.state.RemoteEndpoints["10.244.2.10"] = intent.RemoteEndpoint{IP: "10.244.2.10", ProviderAddress: "192.168.50.12"}
			s.Endpoints[1].Policies = []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
				hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: "192.168.50.12"})}
		}, ""},
		{"a pod's endpoint deleted", func(s *hnslb.Snapshot, _ expectation) { s.Endpoints = s.Endpoints[1:] }, "foreign deleted: endpoint pod"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap, want := realized(), wanted()
			c.change(snap, want)
			d := compare(snap, want, foreign())
			got := d.String()
			switch {
			case c.want == "" && !d.clean():
				t.Errorf("differences in a matching HNS:\n%s", got)
			case c.want != "" && (d.clean() || !strings.Contains(got, c.want)):
				t.Errorf("got\n%s\nwant a line with %q", got, c.want)
			}
		})
	}
}

// Only a load balancer that holds a wanted frontend as it is wanted is
// watched through an address loss: a stale one hnsproxy deletes while
// catching up is no loss, nor is one it replaces because it differs.
func TestHeldAsWanted(t *testing.T) {
	snap, want := realized(), wanted()
	if got := heldAsWanted(snap, want); len(got) != 1 || !got[snap.LoadBalancers[0].ID] {
		t.Errorf("heldAsWanted = %v, want web's alone (the foreign one is not wanted)", got)
	}
	if got := stillHeld(snap, map[string]bool{snap.LoadBalancers[0].ID: true, "gone": true}); got != 1 {
		t.Errorf("stillHeld = %d, want 1 (web is held, gone is not)", got)
	}
	snap.LoadBalancers[0].HostComputeEndpoints = []string{"pod"}
	if got := heldAsWanted(snap, want); len(got) != 0 {
		t.Errorf("heldAsWanted with web's backends differing = %v, want none (hnsproxy replaces it)", got)
	}
	snap = realized()
	delete(want.state.LBs, webKey)
	if got := heldAsWanted(snap, want); len(got) != 0 {
		t.Errorf("heldAsWanted with web no longer wanted = %v, want none", got)
	}
}

// A leak report shows what hnssim's write log says of each object it
// names: the call that stored it with that call's answer, and what a failed
// create left with the answer before it.
func TestWriteHistoryOfALeakedObject(t *testing.T) {
	const lb, partial, other = "528bf1a5-17bc-413d-96c3-68eeeed61365", "e09997b7-4271-4071-9e13-761b33d60eb6", "0a0a0a0a-0000-4000-8000-000000000001"
	log := strings.Join([]string{
		"10:32:35.837000 stored load balancer " + lb + " vips=[] 6:30673->80 backends=[a]",
		"10:32:35.837001 CreateLoadBalancer answered Timeout (applied anyway: true)",
		"10:32:35.900000 stored load balancer " + other + " vips=[10.96.0.1] 6:443->6443 backends=[b]",
		"10:32:35.900001 CreateLoadBalancer answered ok (applied anyway: false)",
		"10:32:36.000000 CreateLoadBalancer answered InvalidParameter (applied anyway: false)",
		"10:32:36.000001 a failed create leaves load balancer " + partial + " without port mappings, holding []",
		"10:32:36.000002 stored load balancer " + partial + " vips=[] no port mapping backends=[a]",
		"10:32:37.000000 kept load balancer " + lb + " on its delete",
		"10:32:37.000001 DeleteLoadBalancer answered ok (applied anyway: false)",
	}, "\n")
	d := diff{Leaked: []string{"load balancer " + lb + " nodeport/v4:30673/tcp",
		fmt.Sprintf("load balancer %s without a port mapping: VIPs [], source VIP \"\", backends [a]", partial)}}
	ids := d.objectIDs()
	if !slices.Equal(ids, []string{lb, partial}) {
		t.Fatalf("objectIDs %v, want %v", ids, []string{lb, partial})
	}
	got := writeHistory(log, lb)
	want := []string{
		"10:32:35.837000 stored load balancer " + lb + " vips=[] 6:30673->80 backends=[a]",
		"10:32:35.837001 CreateLoadBalancer answered Timeout (applied anyway: true)",
		"10:32:37.000000 kept load balancer " + lb + " on its delete",
		"10:32:37.000001 DeleteLoadBalancer answered ok (applied anyway: false)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("history of %s:\n%s\nwant\n%s", lb, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := writeHistory(log, partial); len(got) < 2 || !strings.Contains(got[0], "answered InvalidParameter") {
		t.Errorf("history of the partial %s: %q, want the refusal that left it first", partial, got)
	}
}
