package sim

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

var ctx = context.Background()

func newSim(t testing.TB, profile string) *HNS {
	t.Helper()
	p, err := ProfileByName(profile)
	if err != nil {
		t.Fatal(err)
	}
	return New(Options{Profile: p, Seed: 1})
}

func mustNetwork(t testing.TB, h *HNS, name string, typ hnslb.NetworkType) *hnslb.Network {
	t.Helper()
	n, err := h.CreateNetwork(ctx, &hnslb.Network{
		Name: name, Type: typ,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}},
	})
	if err != nil {
		t.Fatalf("CreateNetwork %s: %v", name, err)
	}
	return n
}

func endpointDoc(ips ...string) *hnslb.Endpoint {
	e := &hnslb.Endpoint{}
	for _, ip := range ips {
		e.IpConfigurations = append(e.IpConfigurations, hnslb.IPConfig{IpAddress: ip})
	}
	return e
}

func remoteDoc(ip, pa string) *hnslb.Endpoint {
	e := endpointDoc(ip)
	e.Flags = hnslb.EndpointFlagsRemoteEndpoint
	if pa != "" {
		e.Policies = []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
			hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: pa})}
	}
	return e
}

// sharedBackend returns a dual-stack endpoint any load balancer can use,
// creating it (and its network) on first use.
func sharedBackend(t testing.TB, h *HNS) string {
	t.Helper()
	for _, e := range h.Snapshot().Endpoints {
		if e.IP() == "10.255.0.1" {
			return e.ID
		}
	}
	n, err := h.CreateNetwork(ctx, &hnslb.Network{Name: "backends", Type: hnslb.NetworkTypeL2Bridge})
	if err != nil {
		t.Fatal(err)
	}
	return mustEndpoint(t, h, n.ID, endpointDoc("10.255.0.1", "fd00:ff::1")).ID
}

// withBackend gives a load balancer without backends the shared one.
func withBackend(t testing.TB, h *HNS, lb *hnslb.LoadBalancer) *hnslb.LoadBalancer {
	if len(lb.HostComputeEndpoints) == 0 {
		lb.HostComputeEndpoints = []string{sharedBackend(t, h)}
	}
	return lb
}

func mustEndpoint(t testing.TB, h *HNS, networkID string, e *hnslb.Endpoint) *hnslb.Endpoint {
	t.Helper()
	out, err := h.CreateEndpoint(ctx, networkID, e)
	if err != nil {
		t.Fatalf("CreateEndpoint %v: %v", e.IpConfigurations, err)
	}
	return out
}

// lbDoc is a TCP load balancer; vip "" makes a NodePort one.
func lbDoc(vip string, port uint16, backends ...string) *hnslb.LoadBalancer {
	lb := &hnslb.LoadBalancer{
		HostComputeEndpoints: backends,
		PortMappings:         []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: port, InternalPort: 8080}},
	}
	if vip != "" {
		lb.FrontendVIPs = []string{vip}
	}
	return lb
}

func wantCode(t testing.TB, err error, want hnslb.ErrorCode) {
	t.Helper()
	if err == nil {
		t.Fatalf("got success, want error 0x%x", uint32(want))
	}
	got, ok := hnslb.CodeOf(err)
	if !ok || got != want {
		t.Fatalf("got %v, want code 0x%x", err, uint32(want))
	}
}

func asError(err error, target **hnslb.Error) bool { return errors.As(err, target) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }

var macPattern = regexp.MustCompile(`^00-15-5D-[0-9A-F]{2}-[0-9A-F]{2}-[0-9A-F]{2}$`)

func contextWithCancel() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }
