package cni_test

import (
	"slices"
	"testing"
)

// TestGCReadsTheSpecsFirstKey: CNI 1.1.0 as released named GC's list of
// still-valid attachments "cni.dev/attachments"; libcni sent
// "cni.dev/valid-attachments", and the spec was changed to match it
// (containernetworking/cni#1101, #1103), libcni since sending both. A
// runtime written to the released text sends only the first key. GC must
// read it as the list it is, not as no list: read as none, every pod on
// the node would lose its endpoint and address.
func TestGCReadsTheSpecsFirstKey(t *testing.T) {
	n1 := startNode(t, "n1", "--node-ip", "192.168.61.1",
		"--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.61.0/24")
	conf := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.61.0/24", socket: n1.socket, dataDir: t.TempDir()}
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
