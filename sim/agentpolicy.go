package sim

import (
	"slices"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// A network policy agent (Calico's felix, Azure's network policy manager)
// writes ACL policies onto the HNS endpoints of this node's pods, in place:
// the endpoint keeps its ID, address, MAC, namespace and load balancer
// references; only its policy list changes. How the list reads afterwards
// is not published, so each plausible answer is a PolicyApply.

// PolicyApply is how an agent's in-place policy write leaves an endpoint's
// policy list.
type PolicyApply string

const (
	// PolicyApplyReplaceACLs: the endpoint's ACL policies are replaced by
	// the ones sent, after its other policies, which keep their order.
	// felix calls hcsshim's v1 HNSEndpoint.ApplyACLPolicy on a document
	// holding only the endpoint's ID, a POST of {ID, Policies: ACLs} to
	// /endpoints/<id>, with every ACL of the endpoint at each change, and
	// none to remove them all; Azure NPM removes ACLs with hcn's ApplyPolicy
	// RequestTypeUpdate, sending the policies it read that are not ACLs
	// first, then the ACLs it keeps.
	PolicyApplyReplaceACLs PolicyApply = "replace-acls"
	// PolicyApplyACLsFirst: as PolicyApplyReplaceACLs, HNS listing the ACLs
	// before the other policies.
	PolicyApplyACLsFirst PolicyApply = "acls-first"
	// PolicyApplyAppend: the policies sent are added after those the
	// endpoint has, ACLs already there included: Azure NPM adds a network
	// policy's ACLs with hcn's ApplyPolicy RequestTypeAdd.
	PolicyApplyAppend PolicyApply = "append"
)

// PolicyApplies lists every PolicyApply, for tests that run each.
func PolicyApplies() []PolicyApply {
	return []PolicyApply{PolicyApplyReplaceACLs, PolicyApplyACLsFirst, PolicyApplyAppend}
}

// ApplyEndpointPoliciesOutOfBand writes pols onto the endpoint id in place,
// as another agent does behind the client's back; how decides what the list
// reads afterwards. Every policy must be an ACL (what those agents write)
// with settings that are a JSON object; the endpoint may be local or remote.
func (h *HNS) ApplyEndpointPoliciesOutOfBand(id string, how PolicyApply, pols []hnslb.EndpointPolicy) error {
	const op = OpApplyEndpointPoliciesOutOfBand
	return h.outOfBand(op, func() error {
		if !slices.Contains(PolicyApplies(), how) {
			return hnsError(op, hnslb.CodeInvalidParameter, "unknown policy apply %q", how)
		}
		for _, p := range pols {
			if p.Type != hnslb.EndpointPolicyACL {
				return hnsError(op, hnslb.CodeInvalidPolicy, "policy type %q: agents write ACLs", p.Type)
			}
			if err := checkSettings(op, hnslb.CodeInvalidPolicy, string(p.Type), p.Settings); err != nil {
				return err
			}
		}
		ep, err := find(op, "endpoint", &h.state.endpoints, id, hnslb.CodeEndpointNotFound)
		if err != nil {
			return err
		}
		sent := copyEndpoint(&hnslb.Endpoint{Policies: pols}).Policies
		ep.Policies = appliedPolicies(ep.Policies, how, sent)
		return nil
	})
}

// appliedPolicies is the list an endpoint with had holds after sent was applied how.
func appliedPolicies(had []hnslb.EndpointPolicy, how PolicyApply, sent []hnslb.EndpointPolicy) []hnslb.EndpointPolicy {
	if how == PolicyApplyAppend {
		return slices.Concat(had, sent)
	}
	others := slices.DeleteFunc(slices.Clone(had), func(p hnslb.EndpointPolicy) bool { return p.Type == hnslb.EndpointPolicyACL })
	if how == PolicyApplyACLsFirst {
		return slices.Concat(sent, others)
	}
	return slices.Concat(others, sent)
}
