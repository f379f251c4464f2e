package sourcevip

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/invoke"
	current "github.com/containernetworking/cni/pkg/types/100"
	"golang.org/x/text/encoding/unicode"

	"github.com/hnsproxy/hnsproxy/internal/buildscript"
	"github.com/hnsproxy/hnsproxy/internal/hostlocalstore"
	"github.com/hnsproxy/hnsproxy/internal/sourcevipipam"
)

// binDir holds host-local, built once for all tests.
var binDir string

func TestMain(m *testing.M) {
	if os.Getenv("CNI_COMMAND") != "" {
		os.Exit(runAsIPAM()) // run as a plugin by a test (hung_test.go)
	}
	dir, err := buildscript.Tools("host-local")
	if err != nil {
		fmt.Fprintln(os.Stderr, "building host-local:", err)
		os.Exit(1)
	}
	binDir = dir
	os.Exit(m.Run())
}

var subnet = netip.MustParsePrefix("10.244.3.0/24")

// node is a CNI configuration directory holding conf, and host-local's store.
func node(t *testing.T, file, conf string) (Options, string) {
	t.Helper()
	confDir, store := t.TempDir(), t.TempDir()
	conf = strings.ReplaceAll(conf, "STORE", store)
	if err := os.WriteFile(filepath.Join(confDir, file), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return Options{ConfDir: confDir, BinDir: binDir, Network: "vxlan0", Subnet: subnet, Record: filepath.Join(t.TempDir(), "source-vip.json")}, store
}

// hnscniList is a node's hnscni configuration as the e2e framework and a
// provisioning script write it.
const hnscniList = `{"cniVersion": "1.1.0", "name": "pods", "plugins": [{"type": "hnscni", "mode": "overlay", "network": "vxlan0",
	"ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.3.0/24", "rangeStart": "10.244.3.10"}]], "dataDir": "STORE"}}]}`

// podAdd reserves a pod's address through the same IPAM as a runtime would.
func podAdd(t *testing.T, o Options, containerID string) netip.Addr {
	t.Helper()
	in, err := findIPAM(o.ConfDir, o.Network, o.Subnet)
	if err != nil {
		t.Fatal(err)
	}
	res, err := invoke.ExecPluginWithResult(context.Background(), filepath.Join(o.BinDir, in.Type), in.Conf,
		&invoke.Args{Command: "ADD", ContainerID: containerID, NetNS: "ns", IfName: "eth0", Path: o.BinDir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := current.NewResultFromResult(res)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := netip.AddrFromSlice(cur.IPs[0].Address.IP.To4())
	return a
}

// held lists the addresses host-local's store holds for network "pods",
// each with the container ID that reserved it.
func held(t *testing.T, store string) map[string]string {
	t.Helper()
	reserved, err := hostlocalstore.Reservations(filepath.Join(store, "pods"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for a, holder := range reserved {
		out[a.String()] = holder.ContainerID
	}
	return out
}

// TestReserveHoldsOneAddressAcrossRestarts: the source VIP comes from the
// pods' own IPAM store (so no pod gets it), a second start (a restart)
// gets the same address without a second reservation, and Release gives
// it back and removes the record.
func TestReserveHoldsOneAddressAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	o, store := node(t, "10-hnscni.conflist", hnscniList)
	pod1 := podAdd(t, o, "pod1")
	vip, err := Reserve(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	pod2 := podAdd(t, o, "pod2")
	if !subnet.Contains(vip) || vip == pod1 || vip == pod2 {
		t.Errorf("source VIP %s, pods %s %s: want a distinct address of %s", vip, pod1, pod2, subnet)
	}
	if got := held(t, store)[vip.String()]; got != sourcevipipam.ContainerID {
		t.Errorf("host-local holds %s for %q, want %q", vip, got, sourcevipipam.ContainerID)
	}
	again, err := Reserve(ctx, o)
	if err != nil || again != vip {
		t.Fatalf("second start: %s, %v; want %s", again, err, vip)
	}
	if n := len(held(t, store)); n != 3 {
		t.Errorf("host-local holds %d addresses after a restart, want 3 (two pods, one VIP): %v", n, held(t, store))
	}

	if got, err := Recorded(o.Record); err != nil || got != vip {
		t.Errorf("Recorded: %s, %v; want %s", got, err, vip)
	}
	released, err := Release(ctx, o.Record, binDir)
	if err != nil || released != vip {
		t.Fatalf("Release: %s, %v; want %s", released, err, vip)
	}
	if _, ok := held(t, store)[vip.String()]; ok {
		t.Errorf("host-local still holds %s after Release", vip)
	}
	if _, err := os.Stat(o.Record); !os.IsNotExist(err) {
		t.Errorf("record after Release: %v, want it removed", err)
	}
	if got, err := Recorded(o.Record); err != nil || got.IsValid() {
		t.Errorf("Recorded after Release: %s, %v; want nothing", got, err)
	}
	if got, err := Release(ctx, o.Record, binDir); err != nil || got.IsValid() {
		t.Errorf("Release without a record: %s, %v; want nothing to do", got, err)
	}
}

// TestReserveAgainWhenIPAMLostIt: a record whose address the IPAM no longer
// holds (its store wiped, as after a reboot, when the pods' reservations
// would otherwise stay taken) is not trusted: a new reservation is made and
// recorded, and no pod is given the old address. From CNI 0.4.0 IPAM CHECK
// says so; an older configuration (Flannel's Windows configurations say
// 0.2.0 or 0.3.0) has no CHECK, and host-local's store is read instead.
func TestReserveAgainWhenIPAMLostIt(t *testing.T) {
	older := func(version string) string {
		return `{"cniVersion": "` + version + `", "name": "pods", "type": "win-overlay",
			"ipam": {"type": "host-local", "subnet": "10.244.3.0/24", "dataDir": "STORE"}}`
	}
	for _, c := range []struct{ name, file, conf string }{
		{"1.1.0", "10-hnscni.conflist", hnscniList},
		{"0.3.0", "10-vxlan0.conf", older("0.3.0")},
		{"0.2.0", "10-vxlan0.conf", older("0.2.0")},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			o, store := node(t, c.file, c.conf)
			if _, err := Reserve(ctx, o); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(filepath.Join(store, "pods")); err != nil {
				t.Fatal(err)
			}
			vip, err := Reserve(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := held(t, store)[vip.String()]; got != sourcevipipam.ContainerID {
				t.Errorf("after the store was wiped: host-local holds %s for %q, want %q", vip, got, sourcevipipam.ContainerID)
			}
			if r, err := readRecord(o.Record); err != nil || r.Address != vip {
				t.Errorf("record %+v, %v; want %s", r, err, vip)
			}
			if pod := podAdd(t, o, "pod1"); pod == vip {
				t.Errorf("a pod was given the source VIP %s", vip)
			}
		})
	}
}

// TestFindIPAM: which configuration and IPAM input the reservation uses.
func TestFindIPAM(t *testing.T) {
	for _, tc := range []struct {
		name, file, conf string
		want             map[string]any // the ipam section sent; nil: an error
	}{
		{"hnscni", "10-hnscni.conflist", hnscniList,
			map[string]any{"type": "host-local", "ranges": []any{[]any{map[string]any{"subnet": "10.244.3.0/24", "rangeStart": "10.244.3.10"}}}, "dataDir": "STORE"}},
		// Flannel's delegate gets host-local over the node's subnet and host-local's default store.
		{"flannel", "10-flannel.conf", `{"cniVersion": "0.3.0", "name": "vxlan0", "type": "flannel", "delegate": {"type": "win-overlay"}}`,
			map[string]any{"type": "host-local", "subnet": "10.244.3.0/24"}},
		{"calico usePodCidr", "10-calico.conflist", `{"cniVersion": "0.3.1", "name": "vxlan0", "plugins": [{"type": "calico", "ipam": {"type": "host-local", "subnet": "usePodCidr"}}]}`,
			map[string]any{"type": "host-local", "subnet": "10.244.3.0/24"}},
		{"no ipam", "10-bridge.conf", `{"cniVersion": "0.3.0", "name": "vxlan0", "type": "win-overlay"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, store := node(t, tc.file, tc.conf)
			in, err := findIPAM(o.ConfDir, o.Network, o.Subnet)
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), "names no IPAM plugin") {
					t.Errorf("err %v, want one saying there is no IPAM", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Name string         `json:"name"`
				IPAM map[string]any `json:"ipam"`
			}
			_ = json.Unmarshal(in.Conf, &got)
			want, _ := json.Marshal(tc.want)
			have, _ := json.Marshal(got.IPAM)
			if strings.ReplaceAll(string(want), "STORE", store) != string(have) || in.Type != "host-local" {
				t.Errorf("ipam %s (%s), want %s", have, in.Type, want)
			}
		})
	}
}

// TestFindIPAMPrefersTheNetworksConfiguration: of several configurations
// the one naming the HNS network is used, else the first (as containerd).
func TestFindIPAMPrefersTheNetworksConfiguration(t *testing.T) {
	o, _ := node(t, "20-vxlan0.conf", `{"cniVersion": "0.3.0", "name": "vxlan0", "type": "flannel"}`)
	other := `{"cniVersion": "0.3.0", "name": "other", "type": "win-bridge", "ipam": {"type": "host-local", "subnet": "10.1.0.0/24"}}`
	if err := os.WriteFile(filepath.Join(o.ConfDir, "10-other.conf"), []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := findIPAM(o.ConfDir, "VXLAN0", subnet)
	if err != nil || filepath.Base(in.Source) != "20-vxlan0.conf" {
		t.Errorf("chose %s (%v), want 20-vxlan0.conf", in.Source, err)
	}
	if in, err := findIPAM(o.ConfDir, "cbr0", subnet); err != nil || filepath.Base(in.Source) != "10-other.conf" {
		t.Errorf("no configuration names cbr0: chose %s (%v), want the first, 10-other.conf", in.Source, err)
	}
}

// TestReserveAgainWhenTheSubnetChanged: a network made again with another
// subnet (Flannel does so when the node's lease or pod CIDR changed) does
// not keep the recorded address of the old one, which the IPAM still holds
// and so passes CHECK: the old reservation is released and one of the new
// subnet is made and recorded.
func TestReserveAgainWhenTheSubnetChanged(t *testing.T) {
	for _, olderRecord := range []bool{false, true} {
		t.Run(fmt.Sprintf("record without its subnet %v", olderRecord), func(t *testing.T) {
			ctx := context.Background()
			o, store := node(t, "10-calico.conflist", `{"cniVersion": "1.0.0", "name": "pods", "plugins": [{"type": "calico", "ipam": {"type": "host-local", "subnet": "usePodCidr", "dataDir": "STORE"}}]}`)
			old, err := Reserve(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if olderRecord {
				r, _ := readRecord(o.Record)
				r.Subnet = netip.Prefix{}
				if err := writeRecord(o.Record, r); err != nil {
					t.Fatal(err)
				}
			}
			o.Subnet = netip.MustParsePrefix("10.244.7.0/24")
			vip, err := Reserve(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if !o.Subnet.Contains(vip) {
				t.Errorf("source VIP %s after the network's subnet became %s (was %s), want an address of the new subnet", vip, o.Subnet, old)
			}
			if got := held(t, store); len(got) != 1 || got[vip.String()] != sourcevipipam.ContainerID {
				t.Errorf("host-local holds %v, want only %s for %q (the old %s released)", got, vip, sourcevipipam.ContainerID, old)
			}
			if r, err := readRecord(o.Record); err != nil || r.Address != vip || r.Subnet != o.Subnet {
				t.Errorf("record %+v, %v; want %s reserved in %s", r, err, vip, o.Subnet)
			}
		})
	}
}

// TestReserveKeepsAnAddressOutsideAnUnchangedSubnet: an IPAM that does not
// allocate from the network's subnet (its own ranges, as calico-ipam's
// pool) keeps its address across restarts: only a change of the network's
// subnet asks for a new one.
func TestReserveKeepsAnAddressOutsideAnUnchangedSubnet(t *testing.T) {
	ctx := context.Background()
	o, store := node(t, "10-hnscni.conflist", hnscniList)
	o.Subnet = netip.MustParsePrefix("10.1.0.0/24")
	vip, err := Reserve(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Reserve(ctx, o)
	if err != nil || again != vip {
		t.Fatalf("second start: %s, %v; want %s", again, err, vip)
	}
	if got := held(t, store); len(got) != 1 || got[vip.String()] != sourcevipipam.ContainerID {
		t.Errorf("host-local holds %v, want only %s for %q", got, vip, sourcevipipam.ContainerID)
	}
}

// TestReserveAgainOnAnotherNetwork: hnsproxy moved to another overlay
// network (another --network-name) with the same subnet but its own CNI
// configuration and IPAM store does not keep the address the old store
// holds, which the new network's pods could be given: the old reservation
// is released and one is made in the new network's store.
func TestReserveAgainOnAnotherNetwork(t *testing.T) {
	ctx := context.Background()
	o, oldStore := node(t, "10-vxlan0.conflist", `{"cniVersion": "1.0.0", "name": "vxlan0", "plugins": [{"type": "calico", "ipam": {"type": "host-local", "subnet": "usePodCidr", "dataDir": "STORE"}}]}`)
	newStore := t.TempDir()
	if err := os.WriteFile(filepath.Join(o.ConfDir, "20-vxlan1.conflist"), []byte(`{"cniVersion": "1.0.0", "name": "vxlan1", "plugins": [{"type": "calico", "ipam": {"type": "host-local", "subnet": "usePodCidr", "dataDir": "`+newStore+`"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	old, err := Reserve(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Network = "vxlan1"
	vip, err := Reserve(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	storeHolds := func(store, network string) []string {
		entries, _ := os.ReadDir(filepath.Join(store, network))
		var ips []string
		for _, e := range entries {
			if _, err := netip.ParseAddr(e.Name()); err == nil {
				ips = append(ips, e.Name())
			}
		}
		return ips
	}
	if got := storeHolds(oldStore, "vxlan0"); len(got) != 0 {
		t.Errorf("the old network's store still holds %v (the source VIP was %s)", got, old)
	}
	if got := storeHolds(newStore, "vxlan1"); len(got) != 1 || got[0] != vip.String() {
		t.Errorf("the new network's store holds %v, want the source VIP %s", got, vip)
	}
	if r, err := readRecord(o.Record); err != nil || r.Address != vip || r.Network != "vxlan1" {
		t.Errorf("record %+v, %v; want %s on vxlan1", r, err, vip)
	}
}

// TestReserveAgainWhenThePodsStoreChanged: the node's CNI configuration
// for the same HNS network now keeps its pods' addresses elsewhere: in
// another host-local store (the configuration renamed, as to hnscni's own
// form with "network", or another dataDir), or through another IPAM plugin
// (here one that keeps its own pool). The old store still holds the
// recorded address, so CHECK passes, but the pods may be given it: the old
// reservation is released and one made where the pods' addresses are.
func TestReserveAgainWhenThePodsStoreChanged(t *testing.T) {
	const first = `{"cniVersion": "1.1.0", "name": "pods", "plugins": [{"type": "hnscni", "mode": "overlay", "network": "vxlan0",
		"ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.3.0/24", "rangeStart": "10.244.3.10"}]], "dataDir": "STORE"}}]}`
	for name, now := range map[string]func(store, pool string) (conf, podStore string){
		"another store": func(store, pool string) (string, string) {
			return strings.ReplaceAll(first, "STORE", pool), pool
		},
		"another IPAM": func(store, pool string) (string, string) {
			return strings.ReplaceAll(strings.ReplaceAll(first, "STORE", store), `"host-local"`, `"pool-ipam"`), pool
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			o, oldStore := node(t, "10-vxlan0.conflist", first)
			// pool-ipam is host-local keeping its addresses in its own pool.
			pool := t.TempDir()
			o.BinDir = t.TempDir()
			if err := os.Symlink(filepath.Join(binDir, "host-local"), filepath.Join(o.BinDir, "host-local")); err != nil {
				t.Fatal(err)
			}
			script := "#!/bin/sh\nsed 's#" + oldStore + "#" + pool + "#' | exec " + filepath.Join(binDir, "host-local") + "\n"
			if err := os.WriteFile(filepath.Join(o.BinDir, "pool-ipam"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			old, err := Reserve(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			conf, podStore := now(oldStore, pool)
			if err := os.WriteFile(filepath.Join(o.ConfDir, "10-vxlan0.conflist"), []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			vip, err := Reserve(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := held(t, podStore)[vip.String()]; got != sourcevipipam.ContainerID {
				t.Errorf("the pods' store holds %s for %q, want %q", vip, got, sourcevipipam.ContainerID)
			}
			if pod := podAdd(t, o, "pod1"); pod == vip {
				t.Errorf("a pod was given the source VIP %s", vip)
			}
			if got := held(t, oldStore); len(got) != 0 {
				t.Errorf("the old store still holds %v (the source VIP was %s)", got, old)
			}
		})
	}
}

// A start killed, or stopped, after its IPAM ADD and before it wrote the
// record leaves the IPAM holding an address for hnsproxy's attachment and
// no record of it. host-local refuses a second ADD for one attachment
// ("duplicate allocation is not allowed"), so every later start failed
// until someone cleaned the IPAM's store by hand. The next start releases
// that unrecorded reservation (it was never used: the record is written
// before the address is) and reserves again.
func TestReserveAfterAKillBetweenAddAndRecord(t *testing.T) {
	ctx := context.Background()
	o, store := node(t, "10-hnscni.conflist", hnscniList)
	in, err := findIPAM(o.ConfDir, o.Network, o.Subnet)
	if err != nil {
		t.Fatal(err)
	}
	killed := record{Type: in.Type, Conf: in.Conf, Source: in.Source}
	if _, err := killed.add(ctx, o.BinDir); err != nil { // the ADD made, then the kill
		t.Fatal(err)
	}
	vip, err := Reserve(ctx, o)
	if err != nil {
		t.Fatalf("the start after the kill: %v", err)
	}
	if got := held(t, store); len(got) != 1 || got[vip.String()] != sourcevipipam.ContainerID {
		t.Errorf("host-local holds %v, want only the source VIP %s for %q", got, vip, sourcevipipam.ContainerID)
	}
	if got, err := Recorded(o.Record); err != nil || got != vip {
		t.Errorf("Recorded: %s, %v; want %s", got, err, vip)
	}
}

// A reservation cut short by the stop (the plugin killed, or never
// started) is the stop, not a failure: its error is the context's, so the
// daemon exits 0 (a service's stop is not a failure the SCM's recovery
// restarts), and a recorded reservation is neither doubted nor released.
func TestReserveStoppedReturnsTheStop(t *testing.T) {
	o, store := node(t, "10-hnscni.conflist", hnscniList)
	vip, err := Reserve(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	stopped, stop := context.WithCancel(context.Background())
	stop()
	if _, err := Reserve(stopped, o); !errors.Is(err, context.Canceled) {
		t.Errorf("Reserve after the stop (a record kept) = %v, want context.Canceled", err)
	}
	if got, err := Recorded(o.Record); err != nil || got != vip {
		t.Errorf("Recorded after the stopped Reserve: %s, %v; want %s kept", got, err, vip)
	}
	if got := held(t, store)[vip.String()]; got != sourcevipipam.ContainerID {
		t.Errorf("host-local holds %s for %q after the stopped Reserve, want %q", vip, got, sourcevipipam.ContainerID)
	}
	if err := os.Remove(o.Record); err != nil {
		t.Fatal(err)
	}
	if _, err := Reserve(stopped, o); !errors.Is(err, context.Canceled) {
		t.Errorf("Reserve after the stop (no record) = %v, want context.Canceled", err)
	}
}

// A record a power loss left empty or cut short (before records reached
// the disk before their rename) names no address: the start reserves
// again, the IPAM holding only the new reservation, where every start
// failed until someone removed the file by hand.
func TestReserveOverADamagedRecord(t *testing.T) {
	for name, content := range map[string]string{"empty": "", "cut short": `{"address": "10.1.0.`, "no address": `{"ipamType": "host-local"}`} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			o, store := node(t, "10-hnscni.conflist", hnscniList)
			if _, err := Reserve(ctx, o); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(o.Record, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			vip, err := Reserve(ctx, o)
			if err != nil {
				t.Fatalf("the start after the record was damaged: %v", err)
			}
			if got := held(t, store); len(got) != 1 || got[vip.String()] != sourcevipipam.ContainerID {
				t.Errorf("host-local holds %v, want only the source VIP %s for %q", got, vip, sourcevipipam.ContainerID)
			}
			if got, err := Recorded(o.Record); err != nil || got != vip {
				t.Errorf("Recorded: %s, %v; want %s", got, err, vip)
			}
		})
	}
}

// TestFindIPAMRefusesAFileContainerdRefuses: a configuration saved with a
// byte order mark (Notepad, PowerShell 5.1's -Encoding UTF8) or as UTF-16
// (PowerShell 5.1's Out-File and >) is not JSON to libcni, and containerd
// (go-cni's loadFromConfDir) stops at such a first file: no pod gets a
// network. hnsproxy refuses it too, saying what is wrong with the file,
// never that the directory holds no configuration; a broken file after a
// loadable first one, which containerd never reads, is still passed over.
func TestFindIPAMRefusesAFileContainerdRefuses(t *testing.T) {
	const flannel = "{\r\n  \"cniVersion\": \"0.3.0\",\r\n  \"name\": \"vxlan0\",\r\n  \"type\": \"flannel\"\r\n}\r\n"
	utf16le := func(s string, bom unicode.BOMPolicy) string {
		out, err := unicode.UTF16(unicode.LittleEndian, bom).NewEncoder().String(s)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct{ name, conf, want string }{
		{"UTF-8 with a byte order mark", "\xef\xbb\xbf" + flannel, "byte order mark"},
		{"UTF-16LE with a byte order mark", utf16le(flannel, unicode.UseBOM), "UTF-16"},
		{"UTF-16LE without one", utf16le(flannel, unicode.IgnoreBOM), "UTF-16"},
		{"not JSON", "name: vxlan0\r\n", "invalid character"},
		{"no plugins", `{"cniVersion": "1.0.0", "name": "vxlan0", "plugins": []}`, "no plugins"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _ := node(t, "10-flannel.conf", tc.conf)
			_, err := findIPAM(o.ConfDir, o.Network, o.Subnet)
			if err == nil || !strings.Contains(err.Error(), "10-flannel.conf") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one naming 10-flannel.conf and saying %q", err, tc.want)
			}
			// After a loadable first file containerd uses that one; so does hnsproxy.
			first := `{"cniVersion": "0.3.0", "name": "other", "type": "win-overlay", "ipam": {"type": "host-local", "subnet": "10.1.0.0/24"}}`
			if err := os.WriteFile(filepath.Join(o.ConfDir, "05-other.conf"), []byte(first), 0o600); err != nil {
				t.Fatal(err)
			}
			if in, err := findIPAM(o.ConfDir, o.Network, o.Subnet); err != nil || filepath.Base(in.Source) != "05-other.conf" {
				t.Errorf("behind a loadable first file: chose %s (%v), want 05-other.conf", in.Source, err)
			}
		})
	}
	o, _ := node(t, "10-flannel.conf", "\r\n"+flannel)
	if in, err := findIPAM(o.ConfDir, o.Network, o.Subnet); err != nil || in.Type != "host-local" {
		t.Errorf("CRLF line endings: %+v, %v; want Flannel's host-local", in, err)
	}
}
