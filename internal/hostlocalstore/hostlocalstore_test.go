package hostlocalstore

import (
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	dir := dirOf(t, `{"cniVersion": "1.0.0", "name": "pods", "ipam": {"type": "host-local", "dataDir": `+strconv.Quote(dataDir)+`}}`)
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
	if err := os.WriteFile(filepath.Join(dir, legacy.String()), []byte("pod-legacy"), 0o600); err != nil {
		t.Fatal(err)
	}
	want[legacy] = types.GCAttachment{ContainerID: "pod-legacy"}
	// A file named with '_' for each ':', as host-local names them on
	// Windows, read on any OS (audit L02).
	escaped := netip.MustParseAddr("fd00:10::9")
	if err := os.WriteFile(filepath.Join(dir, "fd00_10__9"), []byte("pod-c\r\neth0"), 0o600); err != nil {
		t.Fatal(err)
	}
	want[escaped] = types.GCAttachment{ContainerID: "pod-c", IfName: "eth0"}
	// A directory named as an address is no reservation (audit L03).
	if err := os.Mkdir(filepath.Join(dir, "10.244.1.10"), 0o700); err != nil {
		t.Fatal(err)
	}

	got, err := Reservations(dir)
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
	after, err := Reservations(dir)
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
	got, err := Reservations(dirOf(t, `{"name": "never", "ipam": {"dataDir": `+strconv.Quote(t.TempDir())+`}}`))
	if err != nil || len(got) != 0 {
		t.Errorf("Reservations of a missing store = %v, %v; want none", got, err)
	}
}

// TestDirOfAConfigurationWithoutDataDir: host-local's default store, under
// the configuration's name.
func TestDirOfAConfigurationWithoutDataDir(t *testing.T) {
	if got, want := dirOf(t, `{"name": "cbr0", "ipam": {"type": "host-local"}}`), filepath.Join("/var/lib/cni/networks", "cbr0"); got != want { // host-local's default (audit L06)
		t.Errorf("Dir = %s, want %s", got, want)
	}
	if _, err := Dir([]byte(`{"name": 7}`)); err == nil {
		t.Error("Dir of a configuration whose name is no string: no error")
	}
}

// dirOf is Dir of conf, failing the test on an error.
func dirOf(t *testing.T, conf string) string {
	t.Helper()
	dir, err := Dir([]byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
