package diag

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestDiagnoseNotesEndpointsOnAnotherNetwork: on a node whose hnsproxy
// moved to another network, the endpoints the state file owns on the old
// one are noted with their count and network; on the network they are on,
// nothing is noted.
func TestDiagnoseNotesEndpointsOnAnotherNetwork(t *testing.T) {
	f := newFixture(t)
	const noted = "endpoints of hnsproxy's are on network"
	for _, n := range Diagnose(f.read()).Notes {
		if strings.Contains(n, noted) {
			t.Errorf("diagnosing the network hnsproxy uses noted %q", n)
		}
	}
	remote := 0
	for _, ep := range f.hns.Snapshot().Endpoints {
		if ep.IsRemote() {
			remote++
		}
	}
	if remote == 0 {
		t.Fatal("the fixture made no remote endpoint")
	}
	if _, err := f.hns.CreateNetwork(t.Context(), &hnslb.Network{Name: "vxlan0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.245.1.0/24"}}}}}); err != nil {
		t.Fatal(err)
	}
	f.network = "vxlan0"
	want := fmt.Sprintf(`%d %s "cbr0"`, remote, noted)
	notes := Diagnose(f.read()).Notes
	for _, n := range notes {
		if strings.HasPrefix(n, "state file: "+want) && strings.Contains(n, `not on "vxlan0"`) {
			return
		}
	}
	t.Errorf("notes %q; want one starting %q", notes, want)
}

// TestDiagnoseOwnsNoNamedEndpointOnAnotherNetwork: a remote endpoint on
// another network named as hnsproxy names its own (another hnsproxy's,
// there for another --network-name) is not this one's: its start claims
// what an interrupted create left on its own network only, so it neither
// owns nor deletes that endpoint, and no note says it does.
func TestDiagnoseOwnsNoNamedEndpointOnAnotherNetwork(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	other, err := f.hns.CreateNetwork(ctx, &hnslb.Network{Name: "vxlan0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.245.1.0/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.hns.CreateEndpoint(ctx, other.ID, &hnslb.Endpoint{Name: "hnsproxy-remote-10.245.2.9", Flags: hnslb.EndpointFlagsRemoteEndpoint,
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.245.2.9"}}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range Diagnose(f.read()).Notes {
		if strings.Contains(n, "endpoints of hnsproxy's are on network") {
			t.Errorf("noted %q: the endpoint on vxlan0 is not this hnsproxy's", n)
		}
	}
}

// TestDiagnoseNotesAStateFileOfAnotherNetwork: diagnosed while the network
// hnsproxy programs was made again under its name (a new ID) and hnsproxy
// has not restarted onto it, the notes say the state file is of a network
// HNS no longer has, so the rows that differ are read as what the restart
// corrects; diagnosed on another network than hnsproxy's, they name the
// network the state file is of. On hnsproxy's own network nothing is noted,
// also where HNS answers its ID in another case than the state file holds
// (docs/simulator.md, echo upper-guids).
func TestDiagnoseNotesAStateFileOfAnotherNetwork(t *testing.T) {
	const noted = "state file: written by hnsproxy on network"
	f := newFixture(t)
	upper := f.read()
	for i := range upper.HNS.Networks {
		upper.HNS.Networks[i].ID = strings.ToUpper(upper.HNS.Networks[i].ID)
	}
	upper.Network.ID = strings.ToUpper(upper.Network.ID)
	for _, in := range []*Inputs{f.read(), upper} {
		for _, n := range Diagnose(in).Notes {
			if strings.HasPrefix(n, noted) {
				t.Errorf("diagnosing the network hnsproxy uses (ID %s) noted %q", in.Network.ID, n)
			}
		}
	}
	old, err := f.hns.GetNetworkByName(t.Context(), "cbr0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.hns.CreateNetwork(t.Context(), &hnslb.Network{Name: "vxlan0", Type: hnslb.NetworkTypeL2Bridge}); err != nil {
		t.Fatal(err)
	}
	f.network = "vxlan0"
	wantNote(t, Diagnose(f.read()).Notes, fmt.Sprintf(`%s "cbr0" (%s), not on "vxlan0"`, noted, old.ID))

	f.network = "cbr0"
	if err := f.hns.DeleteNetwork(t.Context(), old.ID); err != nil {
		t.Fatal(err)
	}
	again, err := f.hns.CreateNetwork(t.Context(), &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge, Ipams: old.Ipams})
	if err != nil {
		t.Fatal(err)
	}
	wantNote(t, Diagnose(f.read()).Notes, fmt.Sprintf(`%s %s, which HNS no longer has; "cbr0" is %s now`, noted, old.ID, again.ID))
}

// wantNote fails unless a note starts with prefix.
func wantNote(t *testing.T, notes []string, prefix string) {
	t.Helper()
	for _, n := range notes {
		if strings.HasPrefix(n, prefix) {
			return
		}
	}
	t.Errorf("notes %q; want one starting %q", notes, prefix)
}

// TestDiagnoseFindsTheNetworkWithoutRegardToCase: the network is found as
// the daemon's read by name finds it, so --network-name=CBR0 diagnoses cbr0.
func TestDiagnoseFindsTheNetworkWithoutRegardToCase(t *testing.T) {
	f := newFixture(t)
	f.network = "CBR0"
	if in := f.read(); in.Network.Name != "cbr0" {
		t.Errorf("diagnosed network %q, want cbr0", in.Network.Name)
	}
}

// TestDiagnoseOfANetworkDeletedSaysSo: run while the network hnsproxy
// programs is gone (Remove-HnsNetwork, hnsdiag delete networks, a reboot, and
// the CNI has not made it again), the error says that the state file's
// network is gone too, and what brings it back, not that a flag is wrong;
// given a name HNS has no network of while the state file's network is
// there, it names that network; without a state file, it asks for the
// name.
func TestDiagnoseOfANetworkDeletedSaysSo(t *testing.T) {
	f := newFixture(t)
	f.read() // the fixture's hnsproxy has written its state file
	old, err := f.hns.GetNetworkByName(t.Context(), "cbr0")
	if err != nil {
		t.Fatal(err)
	}
	f.network = "cbr1"
	_, err = readNow(t.Context(), f.source())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`hnsproxy's state file is of network "cbr0" (%s)`, old.ID)) {
		t.Errorf("a name HNS has no network of: %v; want it to name the state file's network", err)
	}
	f.network = "cbr0"
	if err := f.hns.DeleteNetwork(t.Context(), old.ID); err != nil {
		t.Fatal(err)
	}
	_, err = readNow(t.Context(), f.source())
	if err == nil || !strings.Contains(err.Error(), "was deleted") || strings.Contains(err.Error(), "give hnsproxy's") {
		t.Errorf("the network deleted: %v; want it to say so, not to ask for a flag", err)
	}
	// The CNI made it again under another name: the networks HNS has are
	// named, so the operator sees which one hnsproxy should now be given.
	if _, err := f.hns.CreateNetwork(t.Context(), &hnslb.Network{Name: "flannel.4096", Type: "Overlay"}); err != nil {
		t.Fatal(err)
	}
	_, err = readNow(t.Context(), f.source())
	if err == nil || !strings.Contains(err.Error(), "was deleted") || !strings.Contains(err.Error(), "flannel.4096") {
		t.Errorf("the network deleted, another made: %v; want it to say so and name the one HNS has", err)
	}
	// No state file (hnsproxy never started here) names no network, so
	// none was deleted: the name given is what to check.
	f.stateFile = filepath.Join(t.TempDir(), "none.json")
	_, err = readNow(t.Context(), f.source())
	if err == nil || strings.Contains(err.Error(), "was deleted") || !strings.Contains(err.Error(), "give hnsproxy's --network-name") {
		t.Errorf("no state file: %v; want it to ask for the network's name", err)
	}
}

// TestDiagnoseBackendsOnAnotherNetworkDiffer: diagnosed on the network
// hnsproxy now uses, a load balancer whose backends are endpoints on the
// old network is not as hnsproxy would program it: hnsproxy resolves
// backends on its own network only, and rewrites it. Each such backend is
// "other-network" and the row differs; before, backends were matched by IP
// alone and the row read ok.
func TestDiagnoseBackendsOnAnotherNetworkDiffer(t *testing.T) {
	f := newFixture(t)
	if _, err := f.hns.CreateNetwork(t.Context(), &hnslb.Network{Name: "vxlan0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}}); err != nil {
		t.Fatal(err)
	}
	f.network = "vxlan0"
	in := f.read()
	cip := row(t, Diagnose(in), "web/frontend:http", RoleClusterIP)
	if cip.State != StateDiffers || countState(cip.Backends, BackendOtherNetwork) != len(cip.Backends) {
		t.Errorf("row %+v, want it to differ with every backend on another network", cip)
	}
	if !slices.ContainsFunc(cip.Why, func(w string) bool { return strings.Contains(w, "on another HNS network than vxlan0") }) {
		t.Errorf("why %q does not say the backends are on another network", cip.Why)
	}
	f.network = "cbr0"
	if cip := row(t, Diagnose(f.read()), "web/frontend:http", RoleClusterIP); cip.State != StateOK {
		t.Errorf("on the network the endpoints are on: %+v, want ok", cip)
	}
}
