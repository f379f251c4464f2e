//go:build windows

package hcnclient

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestAFailedReadClosesTheHandleItOpened: a get or a listing whose query of
// an object HNS fails after its open succeeded, and a load balancer create
// whose read after the create fails, close the object's handle, as one that
// succeeds does. hcn's own getLoadBalancer, getEndpoint, getNetwork,
// getNamespace and createLoadBalancer return at the failed query with the
// handle still open, and hnsproxy makes these calls for as long as it runs:
// the probe's two gets every 30 s, a drift repair's listings every few
// minutes and again after each failure, the network read at each repair,
// the creates a Sync retries.
func TestAFailedReadClosesTheHandleItOpened(t *testing.T) {
	ctx := context.Background()
	assertFailedCalls(t, []failedCall{
		{name: "GetLoadBalancerByID", failOp: "HcnQueryLoadBalancerProperties",
			calls: "HcnEnumerateLoadBalancers,HcnOpenLoadBalancer,HcnQueryLoadBalancerProperties,HcnCloseLoadBalancer",
			do:    func(c hnslb.Client) error { _, err := c.GetLoadBalancerByID(ctx, lbID); return err }},
		{name: "ListLoadBalancers", failOp: "HcnQueryLoadBalancerProperties",
			calls: "HcnEnumerateLoadBalancers,HcnOpenLoadBalancer,HcnQueryLoadBalancerProperties,HcnCloseLoadBalancer",
			do:    func(c hnslb.Client) error { _, err := c.ListLoadBalancers(ctx); return err }},
		{name: "WalkLoadBalancers", failOp: "HcnQueryLoadBalancerProperties",
			calls: "HcnEnumerateLoadBalancers,HcnOpenLoadBalancer,HcnQueryLoadBalancerProperties,HcnCloseLoadBalancer",
			do: func(c hnslb.Client) error {
				return c.(hnslb.Walker).WalkLoadBalancers(ctx, func(*hnslb.LoadBalancer) error { return nil })
			}},
		{name: "CreateLoadBalancer", failOp: "HcnQueryLoadBalancerProperties",
			calls: "HcnCreateLoadBalancer,HcnQueryLoadBalancerProperties,HcnCloseLoadBalancer",
			do:    func(c hnslb.Client) error { _, err := c.CreateLoadBalancer(ctx, sampleLB()); return err }},
		{name: "GetEndpointByID", failOp: "HcnQueryEndpointProperties",
			calls: "HcnEnumerateEndpoints,HcnOpenEndpoint,HcnQueryEndpointProperties,HcnCloseEndpoint",
			do:    func(c hnslb.Client) error { _, err := c.GetEndpointByID(ctx, lbID); return err }},
		{name: "ListEndpointsOfNetwork", failOp: "HcnQueryEndpointProperties",
			calls: "HcnEnumerateEndpoints,HcnOpenEndpoint,HcnQueryEndpointProperties,HcnCloseEndpoint",
			do:    func(c hnslb.Client) error { _, err := c.ListEndpointsOfNetwork(ctx, podNet); return err }},
		{name: "WalkEndpointsOfNetwork", failOp: "HcnQueryEndpointProperties",
			calls: "HcnEnumerateEndpoints,HcnOpenEndpoint,HcnQueryEndpointProperties,HcnCloseEndpoint",
			do: func(c hnslb.Client) error {
				return c.(hnslb.Walker).WalkEndpointsOfNetwork(ctx, podNet, func(*hnslb.Endpoint) error { return nil })
			}},
		{name: "ListEndpoints", failOp: "HcnQueryEndpointProperties",
			calls: "HcnEnumerateEndpoints,HcnOpenEndpoint,HcnQueryEndpointProperties,HcnCloseEndpoint",
			do:    func(c hnslb.Client) error { _, err := c.ListEndpoints(ctx); return err }},
		{name: "GetNetworkByName", failOp: "HcnQueryNetworkProperties",
			calls: "HcnEnumerateNetworks,HcnOpenNetwork,HcnQueryNetworkProperties,HcnCloseNetwork",
			do:    func(c hnslb.Client) error { _, err := c.GetNetworkByName(ctx, "cbr0"); return err }},
		{name: "GetNetworkByID", failOp: "HcnQueryNetworkProperties",
			calls: "HcnEnumerateNetworks,HcnOpenNetwork,HcnQueryNetworkProperties,HcnCloseNetwork",
			do:    func(c hnslb.Client) error { _, err := c.GetNetworkByID(ctx, lbID); return err }},
		{name: "ListNetworks", failOp: "HcnQueryNetworkProperties",
			calls: "HcnEnumerateNetworks,HcnOpenNetwork,HcnQueryNetworkProperties,HcnCloseNetwork",
			do:    func(c hnslb.Client) error { _, err := c.ListNetworks(ctx); return err }},
		{name: "ListNamespaces", failOp: "HcnQueryNamespaceProperties",
			calls: "HcnEnumerateNamespaces,HcnOpenNamespace,HcnQueryNamespaceProperties,HcnCloseNamespace",
			do:    func(c hnslb.Client) error { _, err := c.ListNamespaces(ctx); return err }},
		{name: "GetNamespaceByID", failOp: "HcnQueryNamespaceProperties",
			calls: "HcnEnumerateNamespaces,HcnOpenNamespace,HcnQueryNamespaceProperties,HcnCloseNamespace",
			do:    func(c hnslb.Client) error { _, err := c.GetNamespaceByID(ctx, lbID); return err }},
	})
}

// failedCall is a call whose HNS function failOp fails as HNS gone away,
// and the functions it must have called.
type failedCall struct {
	name, failOp, calls string
	do                  func(hnslb.Client) error
}

// assertFailedCalls runs each call with one load balancer listed and its
// failOp answering RPC_S_SERVER_UNAVAILABLE: it must fail as unavailable,
// having called calls.
func assertFailedCalls(t *testing.T, cases []failedCall) {
	t.Helper()
	one, _ := json.Marshal([]string{lbID})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, client := useFakeHNS(t)
			f.set("IDS", string(one))
			f.fail(c.failOp, 0x800706ba, "")
			asHNSError(t, c.do(client), hnslb.CodeRPCServerUnavailable)
			if calls := f.calls(); calls != c.calls {
				t.Errorf("called %s, want %s", calls, c.calls)
			}
		})
	}
}

// TestANetworkAnsweredWithoutATypeIsNAT: HNS leaves NAT's type, 0, out of a
// network's document, and hcn's getNetwork presets NAT for it; read as no
// type at all, the NAT network would match no mode hnsproxy and hnscni know.
func TestANetworkAnsweredWithoutATypeIsNAT(t *testing.T) {
	ctx := context.Background()
	one, _ := json.Marshal([]string{podNet})
	for name, read := range map[string]func(hnslb.Client) (*hnslb.Network, error){
		"GetNetworkByName": func(c hnslb.Client) (*hnslb.Network, error) { return c.GetNetworkByName(ctx, "nat") },
		"GetNetworkByID":   func(c hnslb.Client) (*hnslb.Network, error) { return c.GetNetworkByID(ctx, podNet) },
		"ListNetworks": func(c hnslb.Client) (*hnslb.Network, error) {
			ns, err := c.ListNetworks(ctx)
			if err != nil || len(ns) != 1 {
				return nil, fmt.Errorf("listed %+v, %v; want one network", ns, err)
			}
			return &ns[0], nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			f, client := useFakeHNS(t)
			f.set("IDS", string(one))
			f.set("OBJECT", `{"ID":"`+podNet+`","Name":"nat"}`)
			n, err := read(client)
			if err != nil {
				t.Fatal(err)
			}
			if n.Type != hnslb.NetworkTypeNAT {
				t.Errorf("a network answered without a type read as type %q, want %q", n.Type, hnslb.NetworkTypeNAT)
			}
		})
	}
}
