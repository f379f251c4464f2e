//go:build windows

package hcnclient

import (
	"context"
	"os"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// These tests drive the client through hcn and hack/wine's DLLs in bridge
// mode against a running hnssim: hack/wine-test.sh starts
// `hnssim serve --bridge` (ws2025, network cbr0 on 10.244.1.0/24, namespace
// lookups failing as "HNS unavailable", answered 0x6ba and 0x6b5 in turn)
// and runs only them with HNSPROXY_HNS_BRIDGE set. On a real Windows host they are skipped, like the
// fake-HNS tests.

func useBridge(t *testing.T) hnslb.Client {
	t.Helper()
	return clientOverFakeDLLs(t, "HNSPROXY_HNS_BRIDGE",
		"talks to hnssim through hack/wine's bridge DLLs; this host has a real HNS",
		"hack/wine-test.sh runs this test against hnssim's bridge")
}

// clientOverFakeDLLs is a client for a test or benchmark that needs
// hack/wine's DLLs in the mode env sets: skipped on a host with a real HNS
// (why says what it needs), failed if env is not set (how says what sets it).
func clientOverFakeDLLs(tb testing.TB, env, why, how string) hnslb.Client {
	tb.Helper()
	if windows.NewLazySystemDLL(hcnDLL).NewProc("HnsproxyFakeHns").Find() != nil {
		tb.Skip(why)
	}
	if os.Getenv(env) == "" {
		tb.Fatalf("%s is not set: %s", env, how)
	}
	c, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// Every kind of call round-trips through hcn, the bridge and the simulator,
// and HNS's errors come back with their codes.
func TestBridgeThroughHcn(t *testing.T) {
	c := useBridge(t)
	ctx := context.Background()
	missing := "5a1c0b1e-0000-4000-8000-000000000001"

	if v, err := c.Version(ctx); err != nil || v != (hnslb.Version{Major: 15, Minor: 5}) {
		t.Fatalf("Version: %v, %v; want 15.5 (ws2025)", v, err)
	}
	nw, err := c.GetNetworkByName(ctx, "cbr0")
	if err != nil || nw.Type != hnslb.NetworkTypeL2Bridge {
		t.Fatalf("GetNetworkByName(cbr0): %+v, %v", nw, err)
	}
	ep, err := c.CreateEndpoint(ctx, nw.ID, &hnslb.Endpoint{
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.10"}}, SchemaVersion: hnslb.V2,
	})
	if err != nil || ep.IP() != "10.244.1.10" || ep.HostComputeNetwork != nw.ID {
		t.Fatalf("CreateEndpoint: %+v, %v", ep, err)
	}
	if eps, err := c.ListEndpointsOfNetwork(ctx, nw.ID); err != nil || len(eps) != 1 || eps[0].ID != ep.ID {
		t.Errorf("ListEndpointsOfNetwork: %+v, %v", eps, err)
	}
	doc := func(target uint16) *hnslb.LoadBalancer {
		return &hnslb.LoadBalancer{
			HostComputeEndpoints: []string{ep.ID}, FrontendVIPs: []string{"10.96.0.10"}, SchemaVersion: hnslb.V2,
			PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: target, ExternalPort: 80}},
		}
	}
	lb, err := c.CreateLoadBalancer(ctx, doc(80))
	if err != nil || lb.ID == "" {
		t.Fatalf("CreateLoadBalancer: %+v, %v", lb, err)
	}
	if _, err := c.CreateLoadBalancer(ctx, doc(81)); !hnslb.IsPortAlreadyExists(err) {
		t.Errorf("a second load balancer on the same frontend: %v, want port already exists", err)
	}
	if up, err := c.UpdateLoadBalancer(ctx, lb.ID, doc(8080)); err != nil || up.PortMappings[0].InternalPort != 8080 {
		t.Errorf("UpdateLoadBalancer: %+v, %v", up, err)
	}
	if lbs, err := c.ListLoadBalancers(ctx); err != nil || len(lbs) != 1 || lbs[0].PortMappings[0].InternalPort != 8080 {
		t.Errorf("ListLoadBalancers: %+v, %v", lbs, err)
	}
	if _, err := c.GetLoadBalancerByID(ctx, missing); !hnslb.IsNotFound(err) {
		t.Errorf("GetLoadBalancerByID(missing): %v, want not found", err)
	}
	if err := c.DeleteLoadBalancer(ctx, missing); !hnslb.IsNotFound(err) {
		t.Errorf("DeleteLoadBalancer(missing): %v, want not found", err)
	}
	if err := c.DeleteLoadBalancer(ctx, lb.ID); err != nil {
		t.Errorf("DeleteLoadBalancer: %v", err)
	}
	ns, err := c.CreateNamespace(ctx, &hnslb.Namespace{Type: hnslb.NamespaceTypeHost, SchemaVersion: hnslb.V2})
	if err != nil {
		t.Fatalf("CreateNamespace: %v", err)
	}
	if err := c.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		t.Errorf("AddNamespaceEndpoint: %v", err)
	}
	// hnssim fails every namespace lookup as "HNS unavailable", and its
	// bridge answers that with 0x6ba and 0x6b5 in turn (--bridge-down-codes):
	// which one a stopped HNS answers is not known.
	for range 2 {
		_, err = c.GetNamespaceByID(ctx, ns.ID)
		if !hnslb.IsUnavailable(err) || hnslb.IsNotFound(err) {
			t.Errorf("GetNamespaceByID while HNS is unavailable: %v, want unavailable and never not found", err)
		}
	}
	if err := c.DeleteEndpoint(ctx, ep.ID); err != nil {
		t.Errorf("DeleteEndpoint: %v", err)
	}
}
