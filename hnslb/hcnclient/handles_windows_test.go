//go:build windows

package hcnclient

import (
	"context"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestARefusedWriteClosesTheHandlesItOpened: an endpoint create, a load
// balancer modify or a namespace attach or detach that HNS refuses, at the
// write or at the read after it, closes every handle it opened, as one that
// succeeds does. hcn's own createEndpoint, updateLoadBalancer and
// modifyNamespace return at the first failure with the network's,
// endpoint's, load balancer's or namespace's handle still open, and the
// reconciler retries such a write every two minutes at most for as long as
// HNS refuses it (an address HNS holds or reserves, a backend gone).
func TestARefusedWriteClosesTheHandlesItOpened(t *testing.T) {
	ctx := context.Background()
	const refusal = `{"Success":false,"Error":"boom"}`
	createEndpoint := func(c hnslb.Client) error {
		_, err := c.CreateEndpoint(ctx, podNet, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.2.7"}},
			Flags: hnslb.EndpointFlagsRemoteEndpoint, SchemaVersion: hnslb.V2})
		return err
	}
	updateLB := func(c hnslb.Client) error { _, err := c.UpdateLoadBalancer(ctx, lbID, sampleLB()); return err }
	attach := func(c hnslb.Client) error { return c.AddNamespaceEndpoint(ctx, podNet, localEP) }
	detach := func(c hnslb.Client) error { return c.RemoveNamespaceEndpoint(ctx, podNet, localEP) }
	for _, c := range []struct {
		name    string
		failOp  string
		hresult uint32
		result  string // HNS's error document
		do      func(hnslb.Client) error
		want    hnslb.ErrorCode
		calls   string
	}{
		{name: "endpoint address held", failOp: "HcnCreateEndpoint", hresult: 0x800700b7, do: createEndpoint,
			want: hnslb.CodeAlreadyExists, calls: "HcnOpenNetwork,HcnCreateEndpoint,HcnCloseNetwork"},
		{name: "endpoint address reserved", failOp: "HcnCreateEndpoint", hresult: 0x803b002f, do: createEndpoint,
			want: hnslb.CodeAddrInvalidOrReserved, calls: "HcnOpenNetwork,HcnCreateEndpoint,HcnCloseNetwork"},
		{name: "endpoint made but not read", failOp: "HcnQueryEndpointProperties", hresult: 0x803b0020, do: createEndpoint,
			want:  hnslb.CodeManagerStopped,
			calls: "HcnOpenNetwork,HcnCreateEndpoint,HcnQueryEndpointProperties,HcnCloseEndpoint,HcnCloseNetwork"},
		{name: "network gone", failOp: "HcnOpenNetwork", hresult: 0x803b0001, do: createEndpoint,
			want: hnslb.CodeNetworkNotFound, calls: "HcnOpenNetwork"},
		{name: "modify naming a backend gone", failOp: "HcnModifyLoadBalancer", hresult: 0x803b0002, do: updateLB,
			want: hnslb.CodeEndpointNotFound, calls: "HcnOpenLoadBalancer,HcnModifyLoadBalancer,HcnCloseLoadBalancer"},
		{name: "modify not implemented", failOp: "HcnModifyLoadBalancer", hresult: 0x80004001, do: updateLB,
			want: hnslb.CodeNotImplemented, calls: "HcnOpenLoadBalancer,HcnModifyLoadBalancer,HcnCloseLoadBalancer"},
		{name: "modified but not read", failOp: "HcnQueryLoadBalancerProperties", hresult: 0x800706ba, do: updateLB,
			want:  hnslb.CodeRPCServerUnavailable,
			calls: "HcnOpenLoadBalancer,HcnModifyLoadBalancer,HcnQueryLoadBalancerProperties,HcnCloseLoadBalancer"},
		{name: "load balancer gone", failOp: "HcnOpenLoadBalancer", hresult: 0x80070490, do: updateLB,
			want: hnslb.CodeNotFound, calls: "HcnOpenLoadBalancer"},
		{name: "endpoint already attached", failOp: "HcnModifyNamespace", hresult: 0x803b0014, do: attach,
			want: hnslb.CodeEndpointAlreadyAttach, calls: "HcnOpenNamespace,HcnModifyNamespace,HcnCloseNamespace"},
		{name: "detach of an endpoint gone", failOp: "HcnModifyNamespace", hresult: 0x803b0002, do: detach,
			want: hnslb.CodeEndpointNotFound, calls: "HcnOpenNamespace,HcnModifyNamespace,HcnCloseNamespace"},
		{name: "attached but not read", failOp: "HcnQueryNamespaceProperties", hresult: 0x800706ba, do: attach,
			want:  hnslb.CodeRPCServerUnavailable,
			calls: "HcnOpenNamespace,HcnModifyNamespace,HcnQueryNamespaceProperties,HcnCloseNamespace"},
		{name: "namespace gone", failOp: "HcnOpenNamespace", hresult: 0x80070490, do: detach,
			want: hnslb.CodeNotFound, calls: "HcnOpenNamespace"},
		// HNS answering success with an error document fails the call, as
		// in hcn, but it opened what it answered a handle for.
		{name: "endpoint made beside an error document", failOp: "HcnCreateEndpoint", result: refusal, do: createEndpoint,
			calls: "HcnOpenNetwork,HcnCreateEndpoint,HcnCloseEndpoint,HcnCloseNetwork"},
		{name: "load balancer made beside an error document", failOp: "HcnCreateLoadBalancer", result: refusal,
			do:    func(c hnslb.Client) error { _, err := c.CreateLoadBalancer(ctx, sampleLB()); return err },
			calls: "HcnCreateLoadBalancer,HcnCloseLoadBalancer"},
		{name: "network opened beside an error document", failOp: "HcnOpenNetwork", result: refusal, do: createEndpoint,
			calls: "HcnOpenNetwork,HcnCloseNetwork"},
		{name: "load balancer opened beside an error document", failOp: "HcnOpenLoadBalancer", result: refusal, do: updateLB,
			calls: "HcnOpenLoadBalancer,HcnCloseLoadBalancer"},
		{name: "namespace opened beside an error document", failOp: "HcnOpenNamespace", result: refusal, do: attach,
			calls: "HcnOpenNamespace,HcnCloseNamespace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, client := useFakeHNS(t)
			f.fail(c.failOp, c.hresult, c.result)
			asHNSError(t, c.do(client), c.want)
			if calls := f.calls(); calls != c.calls {
				t.Errorf("called %s, want %s", calls, c.calls)
			}
		})
	}
}

// TestAFailedCloseFailsTheCallAsInHcn: a call that got what it asked for
// but whose close HNS fails answers that failure, as hcn's own calls do
// (its createEndpoint, getLoadBalancer and friends return the close's
// error); the client's closing of every handle keeps that.
func TestAFailedCloseFailsTheCallAsInHcn(t *testing.T) {
	ctx := context.Background()
	assertFailedCalls(t, []failedCall{
		{name: "GetLoadBalancerByID", failOp: "HcnCloseLoadBalancer",
			calls: "HcnEnumerateLoadBalancers,HcnOpenLoadBalancer,HcnQueryLoadBalancerProperties,HcnCloseLoadBalancer",
			do:    func(c hnslb.Client) error { _, err := c.GetLoadBalancerByID(ctx, lbID); return err }},
		{name: "UpdateLoadBalancer", failOp: "HcnCloseLoadBalancer",
			calls: "HcnOpenLoadBalancer,HcnModifyLoadBalancer,HcnQueryLoadBalancerProperties,HcnCloseLoadBalancer",
			do:    func(c hnslb.Client) error { _, err := c.UpdateLoadBalancer(ctx, lbID, sampleLB()); return err }},
		{name: "CreateLoadBalancer", failOp: "HcnCloseLoadBalancer",
			calls: "HcnCreateLoadBalancer,HcnQueryLoadBalancerProperties,HcnCloseLoadBalancer",
			do:    func(c hnslb.Client) error { _, err := c.CreateLoadBalancer(ctx, sampleLB()); return err }},
		{name: "AddNamespaceEndpoint", failOp: "HcnCloseNamespace",
			calls: "HcnOpenNamespace,HcnModifyNamespace,HcnQueryNamespaceProperties,HcnCloseNamespace",
			do:    func(c hnslb.Client) error { return c.AddNamespaceEndpoint(ctx, podNet, localEP) }},
	})
}

// TestASuccessHRESULTOtherThanSOKIsSuccess: HNS's calls succeed on any
// HRESULT that is not negative (S_FALSE among them), as hcn's syscall
// wrappers read them; read as failures, the object made would be retried
// and made again.
func TestASuccessHRESULTOtherThanSOKIsSuccess(t *testing.T) {
	ctx := context.Background()
	for name, do := range map[string]func(hnslb.Client) error{
		"CreateLoadBalancer": func(c hnslb.Client) error { _, err := c.CreateLoadBalancer(ctx, sampleLB()); return err },
		"UpdateLoadBalancer": func(c hnslb.Client) error { _, err := c.UpdateLoadBalancer(ctx, lbID, sampleLB()); return err },
		"CreateEndpoint":     func(c hnslb.Client) error { _, err := c.CreateEndpoint(ctx, podNet, &hnslb.Endpoint{}); return err },
		"ListLoadBalancers":  func(c hnslb.Client) error { _, err := c.ListLoadBalancers(ctx); return err },
		"DeleteLoadBalancer": func(c hnslb.Client) error { return c.DeleteLoadBalancer(ctx, lbID) },
	} {
		t.Run(name, func(t *testing.T) {
			f, client := useFakeHNS(t)
			f.set("IDS", `["`+lbID+`"]`)
			f.fail("*", 1, "") // S_FALSE from every call
			if err := do(client); err != nil {
				t.Errorf("HNS answered S_FALSE: %v, want success", err)
			}
		})
	}
}
