package sourcevip

import (
	"context"
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
