package cni_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/internal/sourcevipipam"
)

// TestGCReadsTheSpecsFirstKey: CNI 1.1.0 as released named GC's list of
// still-valid attachments "cni.dev/attachments"; libcni sent
// "cni.dev/valid-attachments", and the spec was changed to match it
// (containernetworking/cni#1101, #1103), libcni since sending both. A
// runtime written to the released text sends only the first key. GC must
// read it as the list it is, not as no list: read as none, every pod on
// the node would lose its endpoint and address.
func TestGCReadsTheSpecsFirstKey(t *testing.T) {
	n1, conf := l2bridgeNode(t, 61)
	rt := newRuntime(t, conf)
	running := pod{id: "running", netns: n1.createNamespace(t)}
	rt.add(t, running)
	gone := pod{id: "gone", netns: n1.createNamespace(t)}
	rt.add(t, gone)
	kept := endpointByName(n1.dump(t), running.endpointName("cbr0")).IP()

	gc := conf
	gc.extra = map[string]any{"cni.dev/attachments": []map[string]string{{"containerID": running.id, "ifname": "eth0"}}}
	if err, _ := newSandbox(t).run(t, map[string]string{"CNI_COMMAND": "GC"}, gc.pluginJSON(t)); err != nil {
		t.Fatalf("GC: %+v", err)
	}
	if got := names(n1.dump(t)); !slices.Equal(got, []string{running.endpointName("cbr0")}) {
		t.Errorf("after GC endpoints %v, want only the listed pod's", got)
	}
	if got := allocated(t, conf.dataDir); !slices.Equal(got, []string{kept}) {
		t.Errorf("after GC host-local holds %v, want only the listed pod's %s", got, kept)
	}
	if err := rt.check(running); err != nil {
		t.Errorf("CHECK of the listed pod after GC: %v", err)
	}
}

// TestGCWithoutTheListDeletesNothing: the spec requires GC's list of
// still-valid attachments; libcni sends the runtime's as given, [] when
// empty, null when nil. A GC without it (neither key, or null) is refused as an invalid
// configuration: read as an empty list, a runtime's slip would delete every
// pod's endpoint and release every address on the node (host-local's own
// GC reads it so).
func TestGCWithoutTheListDeletesNothing(t *testing.T) {
	n1, conf := l2bridgeNode(t, 70)
	rt := newRuntime(t, conf)
	rt.add(t, pod{id: "running", netns: n1.createNamespace(t)})
	for _, extra := range []map[string]any{nil, {"cni.dev/valid-attachments": nil}, {"cni.dev/attachments": nil}} {
		gc := conf
		gc.extra = extra
		err, _ := newSandbox(t).run(t, map[string]string{"CNI_COMMAND": "GC"}, gc.pluginJSON(t))
		if err == nil || err.Code != types.ErrInvalidNetworkConfig {
			t.Errorf("GC with %v: %+v, want code %d", extra, err, types.ErrInvalidNetworkConfig)
		}
		if got := names(n1.dump(t)); len(got) != 1 || len(allocated(t, conf.dataDir)) != 1 {
			t.Errorf("GC with %v: endpoints %v, addresses %v; want the running pod's", extra, got, allocated(t, conf.dataDir))
		}
	}
}

// TestGCHandsIPAMTheSourceVIPAndBothKeys: GC passes the runtime's list of
// still-valid attachments on to IPAM (the spec requires it of delegating
// plugins), and IPAM's store also holds an overlay node's source VIP,
// reserved under an attachment no runtime lists: hnsproxy's, or the one
// kube-proxy's start scripts use. An IPAM whose GC releases every
// reservation outside the list (host-local's, from
// containernetworking/plugins v1.10.0) would hand it to a pod, so what IPAM
// is handed is the contract: the source VIP attachments among the valid
// ones, and the list under both keys it has had, whichever the runtime
// sent.
func TestGCHandsIPAMTheSourceVIPAndBothKeys(t *testing.T) {
	n1 := startNode(t, "n1", "--node-ip", "192.168.62.1",
		"--network-name", "vxlan0", "--network-type", "overlay", "--subnet", "10.244.62.0/24")
	ipamDir, record := recordingIPAM(t)
	conf := netConf{version: "1.1.0", mode: "overlay", network: "vxlan0", subnet: "10.244.62.0/24", socket: n1.socket, dataDir: t.TempDir()}
	conf.extra = map[string]any{"ipam": map[string]any{"type": "recording-ipam", "ranges": [][]map[string]string{{{"subnet": conf.subnet}}}, "dataDir": conf.dataDir}}

	// hnsproxy reserves the source VIP through the same IPAM (cmd/hnsproxy/app/sourcevip).
	t.Setenv("CNI_PATH", ipamDir)
	if _, err := invoke.ExecPluginWithResult(context.Background(), filepath.Join(ipamDir, "recording-ipam"), conf.pluginJSON(t),
		&invoke.Args{Command: "ADD", ContainerID: sourcevipipam.ContainerID, NetNS: "none", IfName: sourcevipipam.IfName, Path: ipamDir}, nil); err != nil {
		t.Fatalf("reserving the source VIP: %v", err)
	}
	running := pod{id: "running", netns: n1.createNamespace(t)}
	rt := newRuntime(t, conf)
	rt.cni = libcni.NewCNIConfigWithCacheDir([]string{binDir, ipamDir}, t.TempDir(), nil)
	rt.add(t, running)

	want := slices.Concat([]types.GCAttachment{{ContainerID: running.id, IfName: "eth0"}}, sourcevipipam.Attachments())
	handed := func(what string) {
		t.Helper()
		b, err := os.ReadFile(record)
		if err != nil {
			t.Fatalf("%s: IPAM got no GC: %v", what, err)
		}
		var stdin map[string]json.RawMessage
		if err := json.Unmarshal(b, &stdin); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"cni.dev/valid-attachments", "cni.dev/attachments"} {
			var got []types.GCAttachment
			if err := json.Unmarshal(stdin[key], &got); err != nil || !slices.Equal(got, want) {
				t.Errorf("%s: IPAM's GC got %s %s, want %v", what, key, stdin[key], want)
			}
		}
	}
	if err := rt.cni.GCNetworkList(context.Background(), rt.list, &libcni.GCArgs{ValidAttachments: want[:1]}); err != nil {
		t.Fatalf("GC: %v", err)
	}
	handed("GC through libcni")

	gc := conf
	gc.extra = maps.Clone(conf.extra)
	gc.extra["cni.dev/attachments"] = want[:1]
	if err, _ := newSandbox(t).run(t, map[string]string{"CNI_COMMAND": "GC", "CNI_PATH": binDir + string(os.PathListSeparator) + ipamDir}, gc.pluginJSON(t)); err != nil {
		t.Fatalf("GC with the released spec's key: %+v", err)
	}
	handed("GC with the released spec's key")
	if got := allocated(t, conf.dataDir); len(got) != 2 {
		t.Errorf("host-local holds %v, want the pod's address and the source VIP", got)
	}
}

// TestGCWithHostLocalReleasesOnlyWhatNoOneHolds: with host-local's own GC
// (containernetworking/plugins v1.10.0 releases every reservation whose
// attachment the list leaves out), GC reclaims the address of a pod whose
// endpoint HNS no longer has (a DEL that never came, as after a reboot
// empties HNS), and keeps every other: the listed pod's; an address
// reserved by hand under an attachment no one lists that an endpoint holds
// (a source VIP endpoint as kube-proxy makes one: local, unnamed, in no
// namespace), found through host-local's store; and the source VIP
// reservations of hnsproxy and of kube-proxy's start scripts, which no
// endpoint may hold yet (hnsproxy not started, HNS restarted).
func TestGCWithHostLocalReleasesOnlyWhatNoOneHolds(t *testing.T) {
	ctx := context.Background()
	n1, conf := l2bridgeNode(t, 66)
	rt := newRuntime(t, conf)
	running := pod{id: "running", netns: n1.createNamespace(t)}
	rt.add(t, running)
	lost := pod{id: "lost", netns: n1.createNamespace(t)}
	newRuntime(t, conf).add(t, lost) // a runtime that has since lost its cache
	lostEndpoint := endpointByName(n1.dump(t), lost.endpointName("cbr0"))
	if err := n1.client.DeleteEndpoint(ctx, lostEndpoint.ID); err != nil {
		t.Fatal(err)
	}

	stdin := conf.pluginJSON(t)
	byHand := hostLocalReserve(t, binDir, stdin, "source-vip-by-hand", "none", "eth0")
	if _, err := n1.client.CreateEndpoint(ctx, n1.dump(t).Networks[0].ID, &hnslb.Endpoint{
		IpConfigurations: []hnslb.IPConfig{{IpAddress: byHand.Addr().String(), PrefixLength: uint8(byHand.Bits())}}}); err != nil {
		t.Fatal(err)
	}
	unheld := []string{
		hostLocalReserve(t, binDir, stdin, sourcevipipam.ContainerID, "none", sourcevipipam.IfName).Addr().String(),
		// As sig-windows-tools' and microsoft/SDN's kube-proxy scripts run host-local.
		hostLocalReserve(t, binDir, stdin, "dummy", "dummy", "dummy").Addr().String(),
	}

	if err := rt.cni.GCNetworkList(ctx, rt.list, &libcni.GCArgs{ValidAttachments: []types.GCAttachment{{ContainerID: running.id, IfName: "eth0"}}}); err != nil {
		t.Fatalf("GC: %v", err)
	}
	want := slices.Concat([]string{endpointByName(n1.dump(t), running.endpointName("cbr0")).IP(), byHand.Addr().String()}, unheld)
	slices.Sort(want)
	if got := allocated(t, conf.dataDir); !slices.Equal(got, want) {
		t.Errorf("after GC host-local holds %v, want %v (%s's %s released)", got, want, lost.id, lostEndpoint.IP())
	}
	if err := rt.check(running); err != nil {
		t.Errorf("CHECK of the listed pod after GC: %v", err)
	}
}

// recordingIPAM is an IPAM plugin that writes the stdin of a GC to record
// and hands every other command to host-local.
func recordingIPAM(t *testing.T) (dir, record string) {
	t.Helper()
	dir = shortDir(t)
	record = filepath.Join(dir, "gc.json")
	script := "#!/bin/sh\nif [ \"$CNI_COMMAND\" = GC ]; then cat > " + record + "; exit 0; fi\nexec " + filepath.Join(binDir, "host-local") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "recording-ipam"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, record
}

// TestGCReportsEveryFailure: GC goes on past what it cannot remove and
// reports the errors to the runtime (the spec's words). skel prints one
// CNI error, so GC's answer names every attachment it could not collect,
// not only the first, and asks the runtime to try again later only when
// every failure is one to retry.
func TestGCReportsEveryFailure(t *testing.T) {
	n1, conf := l2bridgeNode(t, 63)
	rt := newRuntime(t, conf)
	leaked := []pod{{id: "leaked1", netns: n1.createNamespace(t)}, {id: "leaked2", netns: n1.createNamespace(t)}}
	for _, p := range leaked {
		newRuntime(t, conf).add(t, p) // a runtime that has since lost its cache
	}
	n1.hnssim(t, "faults", "--error-rate", "DeleteEndpoint=1", "--error-code", "0x57")
	err := rt.cni.GCNetworkList(context.Background(), rt.list, &libcni.GCArgs{ValidAttachments: []types.GCAttachment{}})
	if err == nil {
		t.Fatal("GC with HNS refusing every delete succeeded")
	}
	// HNS refused each delete outright (0x57): no failure is one to retry,
	// so neither is the whole ("try again later" only when each is).
	if cniCode(err) != int(types.ErrInternal) {
		t.Errorf("GC with HNS refusing every delete: code %d, want %d", cniCode(err), types.ErrInternal)
	}
	for _, p := range leaked {
		if !strings.Contains(err.Error(), p.endpointName("cbr0")) {
			t.Errorf("GC's error does not name %s: %v", p.endpointName("cbr0"), err)
		}
	}
	n1.hnssim(t, "faults")
	if err := rt.cni.GCNetworkList(context.Background(), rt.list, &libcni.GCArgs{ValidAttachments: []types.GCAttachment{}}); err != nil {
		t.Errorf("GC once HNS deletes again: %v", err)
	}
	if got := names(n1.dump(t)); len(got) != 0 {
		t.Errorf("endpoints left %v", got)
	}
}

// TestGCAnswersTryAgainLaterBesideWarnings: a GC that could not delete an
// endpoint because HNS was unreachable answers code 11 ("try again
// later"), so the runtime retries it, also when the configuration carries
// a field hnscni ignores (a warning, added to the error's details).
func TestGCAnswersTryAgainLaterBesideWarnings(t *testing.T) {
	for _, extra := range []map[string]any{nil, {"master": "Ethernet"}} {
		n1, conf := l2bridgeNode(t, 69)
		conf.extra = extra
		rt := newRuntime(t, conf)
		// Added by a runtime that has since lost its cache: libcni's GC
		// would otherwise DEL it first, and this is about GC's own answer.
		newRuntime(t, conf).add(t, pod{id: "leaked", netns: n1.createNamespace(t)})
		n1.hnssim(t, "faults", "--error-rate", "DeleteEndpoint=1", "--error-code", "0x6ba")
		err := rt.cni.GCNetworkList(context.Background(), rt.list, &libcni.GCArgs{ValidAttachments: []types.GCAttachment{}})
		if cniCode(err) != int(types.ErrTryAgainLater) {
			t.Errorf("GC (extra fields %v) with HNS unreachable: %v (code %d), want code %d", extra, err, cniCode(err), types.ErrTryAgainLater)
		}
		if extra != nil && !strings.Contains(err.Error(), `unknown configuration field "master"`) {
			t.Errorf("GC's error does not carry the warning: %v", err)
		}
		n1.stop(t)
	}
}

// TestGCKeepsTheAddressOfEveryEndpointItLeaves: an address is released
// only once its endpoint is gone (DEL keeps it while HNS cannot delete the
// endpoint), and GC keeps to that in what it hands IPAM too. Among the
// attachments the runtime no longer lists, GC leaves two endpoints in HNS:
// one HNS would not delete, and one another plugin made (win-bridge's, with
// HNS's MAC). Their attachments go to IPAM's GC as still valid beside the
// runtime's list: an IPAM that releases whatever the list leaves out
// (host-local's GC, from containernetworking/plugins v1.10.0) would
// otherwise hand the next pod an address an endpoint still holds, which
// HNS refuses. For the same reason GC that cannot list the endpoints passes
// nothing on to IPAM.
func TestGCKeepsTheAddressOfEveryEndpointItLeaves(t *testing.T) {
	n1, conf := l2bridgeNode(t, 64)
	ipamDir, record := recordingIPAM(t)
	conf.extra = map[string]any{"ipam": map[string]any{"type": "recording-ipam", "ranges": [][]map[string]string{{{"subnet": conf.subnet}}}, "dataDir": conf.dataDir}}
	runtimeWithIPAM := func() *runtime {
		rt := newRuntime(t, conf)
		rt.cni = libcni.NewCNIConfigWithCacheDir([]string{binDir, ipamDir}, t.TempDir(), nil)
		return rt
	}
	rt := runtimeWithIPAM()
	running, stuck := pod{id: "running", netns: n1.createNamespace(t)}, pod{id: "stuck", netns: n1.createNamespace(t)}
	rt.add(t, running)
	runtimeWithIPAM().add(t, stuck) // the cache of a runtime that has since lost it
	// As win-bridge wired a pod: host-local's address, HNS's MAC.
	ref := pod{id: "ref", netns: n1.createNamespace(t)}
	refIP := hostLocalAdd(t, binDir, conf.pluginJSON(t), ref)
	wireByHand(t, n1, n1.dump(t).Networks[0].ID, ref, &hnslb.Endpoint{Name: ref.endpointName("cbr0"),
		IpConfigurations: []hnslb.IPConfig{{IpAddress: refIP.Addr().String()}}})

	n1.hnssim(t, "faults", "--error-rate", "DeleteEndpoint=1", "--error-code", "0x57")
	listed := []types.GCAttachment{{ContainerID: running.id, IfName: "eth0"}}
	if err := rt.cni.GCNetworkList(context.Background(), rt.list, &libcni.GCArgs{ValidAttachments: listed}); err == nil {
		t.Fatal("GC with HNS refusing the delete succeeded")
	}
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("IPAM got no GC: %v", err)
	}
	var stdin struct {
		Valid []types.GCAttachment `json:"cni.dev/valid-attachments"`
	}
	if err := json.Unmarshal(b, &stdin); err != nil {
		t.Fatal(err)
	}
	for _, p := range []pod{running, stuck, ref} {
		if !slices.Contains(stdin.Valid, types.GCAttachment{ContainerID: p.id, IfName: "eth0"}) {
			t.Errorf("IPAM's GC list %v lacks %s, whose endpoint is still in HNS", stdin.Valid, p.id)
		}
	}
	if got := names(n1.dump(t)); len(got) != 3 {
		t.Errorf("endpoints after GC %v, want all three", got)
	}

	// With the endpoints not readable, which ones stay is not known: GC
	// answers "try again later" and hands IPAM nothing.
	if err := os.Remove(record); err != nil {
		t.Fatal(err)
	}
	n1.hnssim(t, "faults", "--error-rate", "ListEndpoints=1", "--error-code", "0x6ba")
	if err := rt.cni.GCNetworkList(context.Background(), rt.list, &libcni.GCArgs{ValidAttachments: listed}); cniCode(err) != int(types.ErrTryAgainLater) {
		t.Errorf("GC with HNS not listing endpoints: %v, want code 11", err)
	}
	if _, err := os.Stat(record); !os.IsNotExist(err) {
		t.Errorf("IPAM got a GC while HNS could not list the endpoints (%v)", err)
	}
}

// TestGCWithOneFailureAnswersItsOwnError: a GC that met one failure
// answers that failure as it is, its own code and message (here host-local's
// store that cannot be read, code 5), not one rewritten as GC's list of
// failures.
func TestGCWithOneFailureAnswersItsOwnError(t *testing.T) {
	_, conf := l2bridgeNode(t, 71)
	// Where host-local keeps network "pods"'s reservations, a file.
	if err := os.WriteFile(filepath.Join(conf.dataDir, "pods"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	gc := conf
	gc.extra = map[string]any{"cni.dev/valid-attachments": []types.GCAttachment{}}
	err, _ := newSandbox(t).run(t, map[string]string{"CNI_COMMAND": "GC"}, gc.pluginJSON(t))
	if err == nil || err.Code != types.ErrIOFailure || !strings.Contains(err.Msg, "host-local's store") {
		t.Errorf("GC with host-local's store unreadable: %+v, want code %d naming the store", err, types.ErrIOFailure)
	}
}
