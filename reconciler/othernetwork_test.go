package reconciler

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
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
				m := e.moveNetwork()
				oldNet, ours, want := m.oldNet, m.ours, m.want
				if how == "old network gone" {
					if err := e.hns.DeleteNetwork(ctx, oldNet); err != nil {
						t.Fatal(err)
					}
				}
				if how == "failed delete, repair, restart" {
					e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteEndpoint: 1}})
				}
				var c hnslb.Client = e.hns
				if how == "listing the old network fails" {
					// What HNS answers a listing of a network gone is not
					// known: any error must not keep hnsproxy from starting.
					c = failingListOf{e.hns, oldNet}
				}
				var met *codesMet
				if listing != 0 {
					met = &codesMet{Client: e.hns}
					c = met
				}
				r, _ := e.start(c, want)
				if met != nil && !met.met(listing) {
					t.Errorf("the start's listing of the gone network did not meet 0x%x, the code this run is for (met %#x)", uint32(listing), met.codes)
				}
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
				e.assertMoved(r, m, how == "old network gone")
			})
		}
	}
}

// moved is what moveNetwork set up.
type moved struct {
	oldNet, newNet string
	ours           []string // hnsproxy's remote endpoint on the old network
	foreign        string   // another program's there
	want           intent.LB
}

// moveNetwork starts hnsproxy on the env's network with a remote endpoint
// there, adds another program's beside it, and makes a second network
// the env uses from now on, with want the load balancer desired on it.
func (e *env) moveNetwork() moved {
	e.t.Helper()
	m := moved{oldNet: e.netID}
	e.local("10.244.1.10")
	e.started(lb("10.96.0.10", 80, loc("10.244.1.10"), rem("10.244.2.5", "192.168.0.2")))
	if st := e.state(); !slices.Equal(st.Networks, []string{m.oldNet}) {
		e.t.Fatalf("state file records networks %v; want [%s]", st.Networks, m.oldNet)
	}
	if m.ours = e.remoteEndpointsOn(m.oldNet); len(m.ours) != 1 {
		e.t.Fatalf("remote endpoints on the old network %v; want the one of 10.244.2.5", m.ours)
	}
	foreign, err := e.hns.CreateEndpoint(ctx, m.oldNet, &hnslb.Endpoint{HostComputeNetwork: m.oldNet,
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.2.9"}}, Flags: hnslb.EndpointFlagsRemoteEndpoint})
	if err != nil {
		e.t.Fatal(err)
	}
	m.foreign = foreign.ID
	newNet, err := e.hns.CreateNetwork(ctx, &hnslb.Network{Name: "vxlan0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.245.1.0/24"}}}}})
	if err != nil {
		e.t.Fatal(err)
	}
	m.newNet, e.netID = newNet.ID, newNet.ID
	e.local("10.245.1.10")
	m.want = lb("10.96.0.10", 80, loc("10.245.1.10"), rem("10.245.2.5", "192.168.0.2"))
	return m
}

// assertMoved converges r and checks the move is done: want realized,
// hnsproxy's endpoint on the old network deleted and the other program's
// left (unless the old network is gone), and, after a drift repair, the
// state file recording only the new network.
func (e *env) assertMoved(r *Reconciler, m moved, oldGone bool) {
	e.t.Helper()
	e.converge(r)
	if oldGone {
		e.assertRealized([]intent.LB{m.want})
	} else {
		e.assertRealized([]intent.LB{m.want}, "10.244.2.9") // the other program's
		if got := e.remoteEndpointsOn(m.oldNet); !slices.Equal(got, []string{m.foreign}) {
			e.t.Errorf("old network's remote endpoints %v; want only the other program's %s", got, m.foreign)
		}
	}
	if err := r.Repair(ctx); err != nil {
		e.t.Fatal(err)
	}
	if st := e.state(); !slices.Equal(st.Networks, []string{m.newNet}) {
		e.t.Errorf("state file records networks %v; want only %s", st.Networks, m.newNet)
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

// TestEndpointsOnAnotherNetworkAreFoundWithoutRecordedNetworks: a state
// file without "networks" (an older hnsproxy's, which drops the field on a
// downgrade, or a journal without its snapshot) says nothing of where its
// endpoints are. hnsproxy restarted there on another network must still
// find its remote endpoints on the old one and delete them, not forget
// them (a leak for good), and leave another program's alone: the owned
// endpoints the network in use does not show are looked for on every
// network. When that listing fails they are deleted by ID, and the state
// file keeps saying it does not know their network until they are gone, so
// a failed delete and a restart do not lose them either.
func TestEndpointsOnAnotherNetworkAreFoundWithoutRecordedNetworks(t *testing.T) {
	for _, how := range []string{"first sync", "failed delete, restart", "listing every endpoint fails", "listing fails, failed delete, restart"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			m := e.moveNetwork()
			e.dropRecordedNetworks()
			oldNet, want := m.oldNet, m.want
			var c hnslb.Client = e.hns
			if strings.HasPrefix(how, "listing") {
				c = failingListAll{e.hns}
			}
			failDelete := strings.HasSuffix(how, "failed delete, restart")
			if failDelete {
				e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteEndpoint: 1}})
			}
			r, _ := e.start(c, want)
			if failDelete {
				if got := e.remoteEndpointsOn(oldNet); len(got) != 2 {
					t.Fatalf("after a failed delete the old network holds %v; want both endpoints still", got)
				}
				if err := r.Repair(ctx); err != nil {
					t.Fatal(err)
				}
				r.Sync(ctx)
				e.hns.SetFaults(sim.Faults{})
				r, _ = e.start(e.hns, want)
			}
			e.assertMoved(r, m, false)
		})
	}
}

// dropRecordedNetworks rewrites the state file's snapshot without its
// "networks", as an hnsproxy from before the field writes it.
func (e *env) dropRecordedNetworks() {
	e.t.Helper()
	raw, err := os.ReadFile(e.stateFile)
	if err != nil {
		e.t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		e.t.Fatal(err)
	}
	if _, ok := doc["networks"]; !ok {
		e.t.Fatalf("state file %s records no networks to drop", raw)
	}
	delete(doc, "networks")
	if raw, err = json.Marshal(doc); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(e.stateFile, raw, 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// failingListAll is HNS failing every listing of all networks' endpoints.
type failingListAll struct{ hnslb.Client }

func (f failingListAll) ListEndpoints(context.Context) ([]hnslb.Endpoint, error) {
	return nil, hnslb.NewError("ListEndpoints", hnslb.CodeInvalidParameter, "")
}
