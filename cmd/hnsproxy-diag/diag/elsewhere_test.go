package diag

import (
	"fmt"
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
