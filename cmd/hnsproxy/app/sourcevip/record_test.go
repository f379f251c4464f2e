package sourcevip

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestADualStackIPAMGivesTheIPv4Address: an IPAM with an IPv6 range
// before its IPv4 one answers both; the source VIP is the IPv4 address
// (HNS overlay load balancers SNAT IPv4 only), and it is the one recorded
// and kept at a restart.
func TestADualStackIPAMGivesTheIPv4Address(t *testing.T) {
	o, store := node(t, "10-hnscni.conflist", `{"cniVersion": "1.1.0", "name": "pods", "plugins": [{"type": "hnscni", "mode": "overlay", "network": "vxlan0",
	"ipam": {"type": "host-local", "ranges": [[{"subnet": "fd00:3::/64"}], [{"subnet": "10.244.3.0/24"}]], "dataDir": "STORE"}}]}`)
	vip, err := Reserve(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !vip.Is4() || !subnet.Contains(vip) {
		t.Errorf("source VIP %s, want an IPv4 address of %s", vip, subnet)
	}
	if got, err := Recorded(o.Record); err != nil || got != vip {
		t.Errorf("Recorded: %s, %v; want %s", got, err, vip)
	}
	if got := held(t, store)[vip.String()]; got == "" {
		t.Errorf("host-local does not hold %s: %v", vip, held(t, store))
	}
}

// A record naming an address but no IPAM plugin (cut short, or edited by
// hand) is damaged like one naming no address: --cleanup says so and what
// to do, rather than failing to run a plugin named "", and the address is
// not taken for the node's source VIP.
func TestARecordWithoutItsIPAMIsDamaged(t *testing.T) {
	o, _ := node(t, "10-hnscni.conflist", hnscniList)
	if err := os.WriteFile(o.Record, []byte(`{"address": "10.244.3.77"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Release(context.Background(), o.Record, binDir); err == nil || !strings.Contains(err.Error(), "is damaged") || !strings.Contains(err.Error(), "remove it, or release the address by hand") {
		t.Errorf("Release: %v, want the record called damaged", err)
	}
	if got, err := Recorded(o.Record); err == nil || got.IsValid() {
		t.Errorf("Recorded: %s, %v; want no address and an error", got, err)
	}
}
