package hostlocalstore

import (
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/plugins/plugins/ipam/host-local/backend/disk"
)

// TestWindowsReservationsUnescapeIPv6: on Windows host-local names an IPv6
// address's file with '_' for each ':' (no file name holds ':'); the
// reservation, written by host-local's own backend built for Windows,
// reads back under its address, beside an IPv4 one.
func TestWindowsReservationsUnescapeIPv6(t *testing.T) {
	// Removed best-effort: Wine's deletion differs enough to fail
	// t.TempDir's cleanup.
	dataDir, err := os.MkdirTemp("", "hostlocalstore")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dataDir) })
	store, err := disk.New("pods", dataDir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[netip.Addr]types.GCAttachment{
		netip.MustParseAddr("fd00:10::2"): {ContainerID: "pod-a", IfName: "eth0"},
		netip.MustParseAddr("10.244.1.2"): {ContainerID: "pod-a", IfName: "eth0"},
	}
	for a, h := range want {
		if ok, err := store.Reserve(h.ContainerID, h.IfName, net.IP(a.AsSlice()), "0"); !ok || err != nil {
			t.Fatalf("reserve %s: %v %v", a, ok, err)
		}
	}
	store.Close()
	dir := dirOf(t, `{"name": "pods", "ipam": {"dataDir": `+strconv.Quote(dataDir)+`}}`)
	if _, err := os.Stat(filepath.Join(dir, "fd00_10__2")); err != nil {
		t.Fatalf("host-local's file for fd00:10::2 is not named with '_' on Windows: %v", err)
	}
	got, err := Reservations(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("Reservations = %v, want %v", got, want)
	}
}
