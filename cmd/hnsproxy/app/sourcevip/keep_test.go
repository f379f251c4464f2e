package sourcevip

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hnsproxy/hnsproxy/internal/sourcevipipam"
)

// The reservation a start keeps, and the one it does not: what the record,
// the network's name and host-local's store say across restarts.

// olderConf is a Windows CNI configuration of a version without IPAM
// CHECK, as Flannel's say.
func olderConf(version string) string {
	return `{"cniVersion": "` + version + `", "name": "pods", "type": "win-overlay",
		"ipam": {"type": "host-local", "subnet": "10.244.3.0/24", "dataDir": "STORE"}}`
}

// reserveTwice reserves, lets change alter what the second start sees, and
// returns both addresses and what host-local holds after the second.
func reserveTwice(t *testing.T, o Options, store string, change func(*Options)) (first, second string, holds map[string]string) {
	t.Helper()
	ctx := context.Background()
	a, err := Reserve(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	change(&o)
	b, err := Reserve(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return a.String(), b.String(), held(t, store)
}

// TestARecordFromBeforeTheNetworkWasKeptIsKept: a record an earlier hnsproxy
// wrote without the network's name and subnet, and a network name HNS
// matches without regard to case, keep the reservation: an upgrade or a
// --network-name spelled otherwise does not move the node's source VIP
// (which every load balancer SNATs to).
func TestARecordFromBeforeTheNetworkWasKeptIsKept(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, o *Options)
	}{
		{"record without network and subnet", func(t *testing.T, o *Options) {
			var r map[string]any
			raw, err := os.ReadFile(o.Record)
			if err == nil {
				err = json.Unmarshal(raw, &r)
			}
			if err != nil {
				t.Fatal(err)
			}
			delete(r, "network")
			delete(r, "subnet")
			if raw, err = json.Marshal(r); err == nil {
				err = os.WriteFile(o.Record, raw, 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"network name in another case", func(_ *testing.T, o *Options) { o.Network = "VXLAN0" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, store := node(t, "10-hnscni.conflist", hnscniList)
			first, second, held := reserveTwice(t, o, store, func(o *Options) { c.change(t, o) })
			if first != second || len(held) != 1 {
				t.Errorf("first start %s, second %s, host-local holds %v; want the first kept", first, second, held)
			}
		})
	}
}

// TestAnOlderConfigurationKeepsItsAddressAcrossRestarts: a configuration
// of CNI 0.3.x (no IPAM CHECK: host-local's store is read) keeps its
// address at a restart; asking CHECK of it, which the plugin refuses for
// such a version, would reserve a new one at every start.
func TestAnOlderConfigurationKeepsItsAddressAcrossRestarts(t *testing.T) {
	for _, version := range []string{"0.3.0", "0.3.1"} {
		t.Run(version, func(t *testing.T) {
			o, store := node(t, "10-vxlan0.conf", olderConf(version))
			first, second, held := reserveTwice(t, o, store, func(*Options) {})
			if first != second || len(held) != 1 {
				t.Errorf("first start %s, second %s, host-local holds %v; want the first kept", first, second, held)
			}
		})
	}
}

// TestHostLocalsStoreDecidesWhoHoldsTheAddress: without IPAM CHECK, an
// address host-local's store gives another attachment (a pod, after the
// store was wiped and rebuilt) is not the node's source VIP any more, and a
// new one is reserved, also where an older host-local recorded the
// container ID alone; one that names hnsproxy's container ID alone is
// still hnsproxy's.
func TestHostLocalsStoreDecidesWhoHoldsTheAddress(t *testing.T) {
	for _, c := range []struct {
		name, holder string
		kept         bool
	}{
		{"a pod's", "pod1\r\neth0", false},
		{"a pod's, container ID alone", "pod1", false},
		{"hnsproxy's, container ID alone", sourcevipipam.ContainerID, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, store := node(t, "10-vxlan0.conf", olderConf("0.3.0"))
			first, second, _ := reserveTwice(t, o, store, func(*Options) {
				r, err := readRecord(o.Record)
				if err == nil {
					err = os.WriteFile(filepath.Join(store, "pods", r.Address.String()), []byte(c.holder), 0o600)
				}
				if err != nil {
					t.Fatal(err)
				}
			})
			if (first == second) != c.kept {
				t.Errorf("first start %s, second %s; want the first kept: %v", first, second, c.kept)
			}
		})
	}
}

// TestAReservationThatCannotBeUsedIsGivenBack: a start whose IPAM answers
// no IPv4 address (HNS overlay is IPv4 only) fails and leaves host-local
// holding nothing for hnsproxy: an address reserved but never recorded is
// released at once.
func TestAReservationThatCannotBeUsedIsGivenBack(t *testing.T) {
	o, store := node(t, "10-hnscni.conflist", `{"cniVersion": "1.1.0", "name": "pods", "plugins": [{"type": "hnscni", "mode": "overlay", "network": "vxlan0",
	"ipam": {"type": "host-local", "ranges": [[{"subnet": "fd00:3::/64"}]], "dataDir": "STORE"}}]}`)
	if vip, err := Reserve(context.Background(), o); err == nil {
		t.Fatalf("Reserve through an IPv6-only IPAM: %s, want an error", vip)
	}
	if h := held(t, store); len(h) != 0 {
		t.Errorf("host-local holds %v, want nothing", h)
	}
}
