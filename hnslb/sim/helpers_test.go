package sim

import (
	"context"
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
