package sim

import (
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestANetworkIDInUpperCaseNamesTheSameNetwork: IDs are case-insensitive
// (docs/simulator.md, "Identity and lookups"), and HNS keeps GUIDs in lower
// case whatever case a caller sent: an endpoint created on the network's ID
// in upper case references the network as stored, and a listing of the
// network's endpoints by that ID finds it.
func TestANetworkIDInUpperCaseNamesTheSameNetwork(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	upper := strings.ToUpper(n.ID)
	ep := mustEndpoint(t, h, upper, endpointDoc("10.244.1.5"))
	if ep.HostComputeNetwork != n.ID {
		t.Errorf("answered network %q, want %q", ep.HostComputeNetwork, n.ID)
	}
	if stored := h.Snapshot().Endpoints[0].HostComputeNetwork; stored != n.ID {
		t.Errorf("stored network %q, want %q", stored, n.ID)
	}
	listed, err := h.ListEndpointsOfNetwork(ctx, upper)
	if err != nil || len(listed) != 1 || listed[0].ID != ep.ID {
		t.Errorf("ListEndpointsOfNetwork(%s) = %v, %v; want endpoint %s", upper, listed, err, ep.ID)
	}
}
