package hostlocalstore

import (
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/plugins/plugins/ipam/host-local/backend/disk"
)

// TestReservationsReadsWhatHostLocalWrote: the store is written by
// host-local's own backend (IPv4 and IPv6, with its lock and
// last_reserved_ip files beside them) plus a reservation in the format
// before host-local recorded the interface; each address reads back with
// its holder, and handing a subset of the holders to host-local's own GC
// keeps exactly their addresses, the legacy one included.
func TestReservationsReadsWhatHostLocalWrote(t *testing.T) {
	dataDir := t.TempDir()
	store, err := disk.New("pods", dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	want := map[netip.Addr]types.GCAttachment{
		netip.MustParseAddr("10.244.1.2"):   {ContainerID: "pod-a", IfName: "eth0"},
		netip.MustParseAddr("10.244.1.3"):   {ContainerID: "dummy", IfName: "dummy"},
		netip.MustParseAddr("fd00:10::2"):   {ContainerID: "pod-a", IfName: "eth0"},
		netip.MustParseAddr("10.244.1.200"): {ContainerID: "pod-b", IfName: "eth1"},
	}
	for a, h := range want {
		if ok, err := store.Reserve(h.ContainerID, h.IfName, net.IP(a.AsSlice()), "0"); !ok || err != nil {
			t.Fatalf("reserve %s: %v %v", a, ok, err)
		}
	}
	legacy := netip.MustParseAddr("10.244.1.9")
	if err := os.WriteFile(filepath.Join(Dir(dataDir, "pods"), legacy.String()), []byte("pod-legacy"), 0o600); err != nil {
		t.Fatal(err)
	}
	want[legacy] = types.GCAttachment{ContainerID: "pod-legacy"}

	got, err := Reservations(Dir(dataDir, "pods"))
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("Reservations = %v, want %v", got, want)
	}

	keep := []netip.Addr{netip.MustParseAddr("10.244.1.3"), legacy}
	var holders []types.GCAttachment
	for _, a := range keep {
		holders = append(holders, got[a])
	}
	if err := store.GC(holders); err != nil {
		t.Fatal(err)
	}
	after, err := Reservations(Dir(dataDir, "pods"))
	if err != nil {
		t.Fatal(err)
	}
	if left := slices.SortedFunc(maps.Keys(after), netip.Addr.Compare); !slices.Equal(left, keep) {
		t.Errorf("host-local's GC given the holders of %v kept %v", keep, left)
	}
}

// TestReservationsOfNoStore: a network host-local never reserved in has
// no directory, which is no reservation, not an error.
func TestReservationsOfNoStore(t *testing.T) {
	got, err := Reservations(Dir(t.TempDir(), "never"))
	if err != nil || len(got) != 0 {
		t.Errorf("Reservations of a missing store = %v, %v; want none", got, err)
	}
}
