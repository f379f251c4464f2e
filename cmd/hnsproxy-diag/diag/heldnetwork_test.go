package diag

import (
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestDiagnoseNamesNoEndpointOfAnotherNetworkAsAHolder: HNS keeps one
// endpoint per address on a network, not across networks. The cluster IP's
// load balancer lacks web-b while hnsproxy's remote endpoint for it is
// there, and another network (a container runtime's NAT network, or the
// network hnsproxy used before) has an endpoint at that address. The
// diagnosis named that endpoint as the reason HNS refuses hnsproxy's and
// told the operator to remove it; it does not block anything on the
// diagnosed network, and hnsproxy's next start puts web-b back.
func TestDiagnoseNamesNoEndpointOfAnotherNetworkAsAHolder(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	ours := cipBackendID(t, Diagnose(f.read()), webB)
	for _, l := range f.hns.Snapshot().LoadBalancers {
		if i := slices.Index(l.HostComputeEndpoints, ours); i >= 0 && slices.Contains(l.FrontendVIPs, frontendIP) {
			if err := f.hns.DeleteLoadBalancerOutOfBand(l.ID); err != nil {
				t.Fatal(err)
			}
			l.HostComputeEndpoints = slices.Delete(slices.Clone(l.HostComputeEndpoints), i, i+1)
			if _, err := f.hns.PutLoadBalancerOutOfBand(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	nat, err := f.hns.CreateNetwork(ctx, &hnslb.Network{Name: "nat", Type: hnslb.NetworkTypeNAT,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.2.0/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := f.hns.CreateEndpoint(ctx, nat.ID, &hnslb.Endpoint{Name: "on-nat", IpConfigurations: []hnslb.IPConfig{{IpAddress: webB}}})
	if err != nil {
		t.Fatal(err)
	}
	cip := row(t, Diagnose(f.read()), "web/frontend:http", RoleClusterIP)
	if cip.State != StateDiffers || hasLine(cip.Why, elsewhere.ID) || hasLine(cip.Why, "HNS refuses") {
		t.Errorf("ClusterIP row %s, why %q: want web-b missing, with no endpoint of network nat named as holding its address", cip.State, cip.Why)
	}
	// What hnsproxy's next start does: web-b is back on its own endpoint.
	rec := f.startHNSProxy(ctx)
	rec.Sync(ctx)
	if after := row(t, Diagnose(f.read()), "web/frontend:http", RoleClusterIP); after.State != StateOK {
		t.Errorf("after hnsproxy's start the ClusterIP row is %s, why %q: want web-b back", after.State, after.Why)
	}
}
