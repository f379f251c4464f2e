package sim

import (
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestHNSAssignsAddress: a local endpoint created without an address gets
// the lowest free one of the network's subnet (not the gateway), with the
// subnet's prefix length and a default route; a deleted endpoint's address
// is handed out again; a full subnet is refused.
func TestHNSAssignsAddress(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	n, err := h.CreateNetwork(ctx, &hnslb.Network{
		Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{
			IpAddressPrefix: "10.244.1.0/29",
			Routes:          []hnslb.Route{{NextHop: "10.244.1.1", DestinationPrefix: "0.0.0.0/0"}},
		}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.2")) // held statically
	var got, ids []string
	for range 4 {
		ep := mustEndpoint(t, h, n.ID, &hnslb.Endpoint{})
		if len(ep.IpConfigurations) != 1 || ep.IpConfigurations[0].PrefixLength != 29 ||
			len(ep.Routes) != 1 || ep.Routes[0].NextHop != "10.244.1.1" {
			t.Fatalf("assigned endpoint %+v", ep)
		}
		got = append(got, ep.IP())
		ids = append(ids, ep.ID)
	}
	if want := []string{"10.244.1.3", "10.244.1.4", "10.244.1.5", "10.244.1.6"}; !slices.Equal(got, want) {
		t.Errorf("assigned %v, want %v", got, want)
	}
	_, err = h.CreateEndpoint(ctx, n.ID, &hnslb.Endpoint{})
	wantCode(t, err, hnslb.CodeInvalidParameter) // .7 is broadcast: the subnet is full
	if err := h.DeleteEndpoint(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	if again := mustEndpoint(t, h, n.ID, &hnslb.Endpoint{}); again.IP() != "10.244.1.4" {
		t.Errorf("after a delete assigned %s, want the freed 10.244.1.4", again.IP())
	}
}
