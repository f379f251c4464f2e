//go:build windows

package hcnclient

import (
	"context"
	"os"
	"testing"

	"github.com/Microsoft/hcsshim/hcn"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestReadsSendHcnsQueries: each get and listing the client makes itself
// (reads_windows.go) enumerates with the query hcn's own function sends,
// filter and flags included. HNS selects by that query alone: a filter on
// the wrong key lists every network's endpoints, or finds no endpoint by
// its name; a detailed query answers fields a plain one leaves out, which
// the echo baseline would then see.
func TestReadsSendHcnsQueries(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		ours func(hnslb.Client)
		hcn  func()
	}{
		{"ListEndpointsOfNetwork",
			func(c hnslb.Client) { _, _ = c.ListEndpointsOfNetwork(ctx, podNet) },
			func() { _, _ = hcn.ListEndpointsOfNetwork(podNet) }},
		{"GetEndpointByName",
			func(c hnslb.Client) { _, _ = c.GetEndpointByName(ctx, "0123456789ab_eth0") },
			func() { _, _ = hcn.GetEndpointByName("0123456789ab_eth0") }},
		{"GetEndpointByID",
			func(c hnslb.Client) { _, _ = c.GetEndpointByID(ctx, localEP) },
			func() { _, _ = hcn.GetEndpointByID(localEP) }},
		{"ListEndpoints",
			func(c hnslb.Client) { _, _ = c.ListEndpoints(ctx) },
			func() { _, _ = hcn.ListEndpoints() }},
		{"GetNetworkByName",
			func(c hnslb.Client) { _, _ = c.GetNetworkByName(ctx, "cbr0") },
			func() { _, _ = hcn.GetNetworkByName("cbr0") }},
		{"GetNetworkByID",
			func(c hnslb.Client) { _, _ = c.GetNetworkByID(ctx, podNet) },
			func() { _, _ = hcn.GetNetworkByID(podNet) }},
		{"ListNetworks",
			func(c hnslb.Client) { _, _ = c.ListNetworks(ctx) },
			func() { _, _ = hcn.ListNetworks() }},
		{"GetNamespaceByID",
			func(c hnslb.Client) { _, _ = c.GetNamespaceByID(ctx, podNet) },
			func() { _, _ = hcn.GetNamespaceByID(podNet) }},
		{"ListNamespaces",
			func(c hnslb.Client) { _, _ = c.ListNamespaces(ctx) },
			func() { _, _ = hcn.ListNamespaces() }},
		{"GetLoadBalancerByID",
			func(c hnslb.Client) { _, _ = c.GetLoadBalancerByID(ctx, lbID) },
			func() { _, _ = hcn.GetLoadBalancerByID(lbID) }},
		{"ListLoadBalancers",
			func(c hnslb.Client) { _, _ = c.ListLoadBalancers(ctx) },
			func() { _, _ = hcn.ListLoadBalancers() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, client := useFakeHNS(t)
			f.set("IDS", "[]") // nothing found: the enumeration is all each makes
			c.hcn()
			wantCalls, wantQuery := f.calls(), os.Getenv("HNSPROXY_FAKE_QUERY")
			if wantQuery == "" {
				t.Fatalf("hcn's call made no enumeration (calls %s)", wantCalls)
			}
			f.set("QUERY", "")
			c.ours(client)
			if calls, query := f.calls(), os.Getenv("HNSPROXY_FAKE_QUERY"); calls != wantCalls || query != wantQuery {
				t.Errorf("HNS got %s with query %s; hcn sends %s with %s", calls, query, wantCalls, wantQuery)
			}
		})
	}
}
