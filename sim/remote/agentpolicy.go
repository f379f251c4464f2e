package remote

import (
	"context"
	"net/http"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// pathEndpointPolicies writes a policy agent's ACLs onto an endpoint in
// place (sim.HNS.ApplyEndpointPoliciesOutOfBand).
const pathEndpointPolicies = "/endpoint-policies"

// EndpointPoliciesRequest applies Policies to the endpoint with ID Endpoint
// as Apply (a sim.PolicyApply) says.
type EndpointPoliciesRequest struct {
	Endpoint string                 `json:"endpoint"`
	Apply    string                 `json:"apply"`
	Policies []hnslb.EndpointPolicy `json:"policies"`
}

// ApplyEndpointPolicies writes a policy agent's ACLs onto an endpoint of
// the served simulator, behind its clients' backs.
func (c *Client) ApplyEndpointPolicies(ctx context.Context, req EndpointPoliciesRequest) error {
	return c.call(ctx, "ApplyEndpointPolicies", http.MethodPost, pathEndpointPolicies, req, nil)
}

func (s *server) endpointPolicies(w http.ResponseWriter, r *http.Request) {
	serveSetter(w, r, "ApplyEndpointPolicies", s.x.ApplyEndpointPolicies)
}
