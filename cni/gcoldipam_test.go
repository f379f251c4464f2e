package cni_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/version"
)

// TestGCPassesOverAnIPAMThatPredatesGC: GC hands on to IPAM's GC, and an
// IPAM plugin that predates CNI 1.1 answers it "incompatible CNI versions"
// (code 1). That is no failure of the GC: the endpoints and addresses of
// the attachments the runtime no longer lists are gone all the same, and
// GC answers success rather than an error the runtime would retry forever.
func TestGCPassesOverAnIPAMThatPredatesGC(t *testing.T) {
	n1, conf := l2bridgeNode(t, 75)
	ipamDir := shortDir(t)
	script := "#!/bin/sh\nif [ \"$CNI_COMMAND\" = GC ]; then echo '{\"cniVersion\": \"1.1.0\", \"code\": 1, \"msg\": \"incompatible CNI versions\"}'; exit 1; fi\nexec " + filepath.Join(binDir, "host-local") + "\n"
	if err := os.WriteFile(filepath.Join(ipamDir, "old-ipam"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	conf.extra = map[string]any{"ipam": map[string]any{"type": "old-ipam", "ranges": [][]map[string]string{{{"subnet": conf.subnet}}}, "dataDir": conf.dataDir}}
	list, err := libcni.NetworkConfFromBytes(conf.listJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	exec := &invoke.DefaultExec{RawExec: &invoke.RawExec{Stderr: os.Stderr}, PluginDecoder: version.PluginDecoder{}}
	rt := &runtime{cni: libcni.NewCNIConfigWithCacheDir([]string{binDir, ipamDir}, t.TempDir(), exec), list: list}
	kept, leaked := pod{id: "kept", netns: n1.createNamespace(t)}, pod{id: "leaked", netns: n1.createNamespace(t)}
	rt.add(t, kept)
	(&runtime{cni: libcni.NewCNIConfigWithCacheDir([]string{binDir, ipamDir}, t.TempDir(), exec), list: list}).add(t, leaked)
	valid := []types.GCAttachment{{ContainerID: kept.id, IfName: "eth0"}}
	if err := rt.cni.GCNetworkList(context.Background(), list, &libcni.GCArgs{ValidAttachments: valid}); err != nil {
		t.Errorf("GC with an IPAM that predates GC: %v, want success", err)
	}
	if got := names(n1.dump(t)); len(got) != 1 || got[0] != kept.endpointName("cbr0") {
		t.Errorf("endpoints after GC %v, want only %s", got, kept.endpointName("cbr0"))
	}
	if got := allocated(t, conf.dataDir); len(got) != 1 {
		t.Errorf("host-local holds %v after GC, want the kept pod's address alone", got)
	}
}
