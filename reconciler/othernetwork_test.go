package reconciler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestEndpointsOnANetworkNoLongerUsedAreDeleted: hnsproxy restarted on
// another network (another --network-name) while the old one stays deletes
// the remote endpoints it made on the old one, which its listing of the
// new one does not show, and leaves another program's there alone. It does
// so when the first delete fails and a drift repair and a restart come
// before the retry; a network gone since has nothing to delete, whether
// its listing answers an empty list or an error (each modelled code); and
// a listing of the old network that fails still lets hnsproxy start, its
// endpoints then deleted by ID.
// Once none is left, the state file records only the network in use.
func TestEndpointsOnANetworkNoLongerUsedAreDeleted(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		hows := []string{"first sync", "failed delete, repair, restart", "old network gone", "listing the old network fails"}
		for _, code := range sim.MissingNetworkCodes() {
			hows = append(hows, fmt.Sprintf("old network gone, its listing answering 0x%x", uint32(code)))
		}
		for _, how := range hows {
			t.Run(fmt.Sprintf("%s/%s", profile, how), func(t *testing.T) {
				var listing hnslb.ErrorCode
				if _, err := fmt.Sscanf(how, "old network gone, its listing answering 0x%x", &listing); err == nil {
					how = "old network gone"
				}
				e := newEnvVariants(t, profile, sim.ErrorVariants{MissingNetworkListing: listing})
				oldNet := e.netID
				e.local("10.244.1.10")
				e.started(lb("10.96.0.10", 80, loc("10.244.1.10"), rem("10.244.2.5", "192.168.0.2")))
				if st := e.state(); !slices.Equal(st.Networks, []string{oldNet}) {
					t.Fatalf("state file records networks %v; want [%s]", st.Networks, oldNet)
				}
				ours := e.remoteEndpointsOn(oldNet)
				if len(ours) != 1 {
					t.Fatalf("remote endpoints on the old network %v; want the one of 10.244.2.5", ours)
				}
				foreign, err := e.hns.CreateEndpoint(ctx, oldNet, &hnslb.Endpoint{HostComputeNetwork: oldNet,
					IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.2.9"}}, Flags: hnslb.EndpointFlagsRemoteEndpoint})
				if err != nil {
					t.Fatal(err)
				}

				newNet, err := e.hns.CreateNetwork(ctx, &hnslb.Network{Name: "vxlan0", Type: hnslb.NetworkTypeL2Bridge,
					Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.245.1.0/24"}}}}})
				if err != nil {
					t.Fatal(err)
				}
				if how == "old network gone" {
					if err := e.hns.DeleteNetwork(ctx, oldNet); err != nil {
						t.Fatal(err)
					}
				}
				e.netID = newNet.ID
				e.local("10.245.1.10")
				want := lb("10.96.0.10", 80, loc("10.245.1.10"), rem("10.245.2.5", "192.168.0.2"))
				if how == "failed delete, repair, restart" {
					e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteEndpoint: 1}})
				}
				var c hnslb.Client = e.hns
				if how == "listing the old network fails" {
					// What HNS answers a listing of a network gone is not
					// known: any error must not keep hnsproxy from starting.
					c = failingListOf{e.hns, oldNet}
				}
				r, _ := e.start(c, want)
				if how == "failed delete, repair, restart" {
					if got := e.remoteEndpointsOn(oldNet); len(got) != 2 {
						t.Fatalf("after a failed delete the old network holds %v; want both endpoints still", got)
					}
					if err := r.Repair(ctx); err != nil {
						t.Fatal(err)
					}
					r.Sync(ctx) // saves what the repair changed
					if st := e.state(); !slices.ContainsFunc(st.RemoteEndpoints, func(id string) bool { return strings.EqualFold(id, ours[0]) }) ||
						!slices.Contains(st.Networks, oldNet) {
						t.Fatalf("after a repair the state file owns %v on networks %v; want %s still owned, on %s", st.RemoteEndpoints, st.Networks, ours[0], oldNet)
					}
					e.hns.SetFaults(sim.Faults{})
					r, _ = e.start(e.hns, want)
				}
				e.converge(r)
				if how == "old network gone" {
					e.assertRealized([]intent.LB{want})
				} else {
					e.assertRealized([]intent.LB{want}, "10.244.2.9") // the other program's
					if got := e.remoteEndpointsOn(oldNet); !slices.Equal(got, []string{foreign.ID}) {
						t.Errorf("old network's remote endpoints %v; want only the other program's %s", got, foreign.ID)
					}
				}
				if err := r.Repair(ctx); err != nil {
					t.Fatal(err)
				}
				if st := e.state(); !slices.Equal(st.Networks, []string{newNet.ID}) {
					t.Errorf("state file records networks %v; want only %s", st.Networks, newNet.ID)
				}
			})
		}
	}
}

// failingListOf is HNS failing every listing of one network's endpoints.
type failingListOf struct {
	hnslb.Client
	network string
}

func (f failingListOf) ListEndpointsOfNetwork(ctx context.Context, network string) ([]hnslb.Endpoint, error) {
	if strings.EqualFold(network, f.network) {
		return nil, hnslb.NewError("ListEndpointsOfNetwork", hnslb.CodeInvalidParameter, "network %s", network)
	}
	return f.Client.ListEndpointsOfNetwork(ctx, network)
}

// state is what the state file holds now.
func (e *env) state() *stateFile {
	e.t.Helper()
	st, err := loadState(e.stateFile)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// remoteEndpointsOn are the IDs of network's remote endpoints in HNS.
func (e *env) remoteEndpointsOn(network string) []string {
	var ids []string
	for _, ep := range e.snapshot().Endpoints {
		if strings.EqualFold(ep.HostComputeNetwork, network) && ep.IsRemote() {
			ids = append(ids, ep.ID)
		}
	}
	return ids
}
