package sim

import (
	"reflect"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/simtest"
)

func policyTypes(ps []hnslb.EndpointPolicy) []hnslb.EndpointPolicyType {
	var out []hnslb.EndpointPolicyType
	for _, p := range ps {
		out = append(out, p.Type)
	}
	return out
}

// TestApplyEndpointPoliciesOutOfBand: an agent's ACLs change the policy
// list of the endpoint alone, as each PolicyApply says, twice in a row (a
// policy change after the first); the endpoint keeps its ID, address, MAC,
// namespace and the load balancer that uses it; the write is counted on its
// own, not as a write of the client's; a non-ACL policy, settings that are
// not an object, an unknown apply or endpoint are refused.
func TestApplyEndpointPoliciesOutOfBand(t *testing.T) {
	const (
		nat = hnslb.EndpointPolicyOutBoundNAT
		pa  = hnslb.EndpointPolicyProviderAddress
		acl = hnslb.EndpointPolicyACL
	)
	want := map[PolicyApply][]hnslb.EndpointPolicyType{
		// OutBoundNAT, PA, then the second set's 1+2 ACLs.
		PolicyApplyReplaceACLs: {nat, pa, acl, acl, acl},
		PolicyApplyACLsFirst:   {acl, acl, acl, nat, pa},
		// Both sets: 2+2 and 1+2.
		PolicyApplyAppend: {nat, pa, acl, acl, acl, acl, acl, acl, acl},
	}
	for _, how := range PolicyApplies() {
		t.Run(string(how), func(t *testing.T) {
			h := newSim(t, ProfileWS2022)
			n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
			doc := endpointDoc("10.244.1.5")
			doc.Policies = []hnslb.EndpointPolicy{
				hnslb.NewEndpointPolicy(nat, hnslb.OutboundNatPolicySetting{Exceptions: []string{"10.244.0.0/16"}}),
				hnslb.NewEndpointPolicy(pa, hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: "10.0.0.11"}),
			}
			ep := mustEndpoint(t, h, n.ID, doc)
			ns, err := h.CreateNamespace(ctx, &hnslb.Namespace{})
			if err != nil {
				t.Fatal(err)
			}
			if err := h.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
				t.Fatal(err)
			}
			lb, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.1", 80, ep.ID))
			if err != nil {
				t.Fatal(err)
			}
			before, _ := h.GetEndpointByID(ctx, ep.ID)
			h.ResetCounters()
			for _, set := range [][]hnslb.EndpointPolicy{simtest.AgentACLs("np", 2), simtest.AgentACLs("np", 1)} {
				if err := h.ApplyEndpointPoliciesOutOfBand(ep.ID, how, set); err != nil {
					t.Fatal(err)
				}
			}
			got, err := h.GetEndpointByID(ctx, ep.ID)
			if err != nil {
				t.Fatal(err)
			}
			if pt := policyTypes(got.Policies); !reflect.DeepEqual(pt, want[how]) {
				t.Errorf("policies %v, want %v", pt, want[how])
			}
			got.Policies, before.Policies = nil, nil
			if !reflect.DeepEqual(got, before) {
				t.Errorf("endpoint changed beyond its policies:\n got %+v\nwant %+v", got, before)
			}
			if l, _ := h.GetLoadBalancerByID(ctx, lb.ID); !reflect.DeepEqual(l.HostComputeEndpoints, []string{ep.ID}) {
				t.Errorf("load balancer backends %v", l.HostComputeEndpoints)
			}
			wantCode(t, h.ApplyEndpointPoliciesOutOfBand(ep.ID, how, []hnslb.EndpointPolicy{doc.Policies[0]}), hnslb.CodeInvalidPolicy)
			wantCode(t, h.ApplyEndpointPoliciesOutOfBand(ep.ID, how, []hnslb.EndpointPolicy{{Type: acl, Settings: []byte("1")}}), hnslb.CodeInvalidPolicy)
			wantCode(t, h.ApplyEndpointPoliciesOutOfBand(ep.ID, "merge", nil), hnslb.CodeInvalidParameter)
			wantCode(t, h.ApplyEndpointPoliciesOutOfBand("0b5e4c1e-0000-4000-8000-000000000000", how, nil), hnslb.CodeEndpointNotFound)
			c := h.Counters()
			if c.Count(OpApplyEndpointPoliciesOutOfBand) != 6 || c.Writes() != 0 || c.Total() != 2 {
				t.Errorf("counters %+v: want 6 out-of-band applies, no write, the two gets", c.Calls)
			}
		})
	}
}
