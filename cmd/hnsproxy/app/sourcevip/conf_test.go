package sourcevip

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFindIPAMMatchesThePluginsNetwork: hnscni names the HNS network in
// its plugin's "network", whatever the list's name: that field decides
// which configuration is the network's, over a list named after the
// network whose plugin names another.
func TestFindIPAMMatchesThePluginsNetwork(t *testing.T) {
	o, _ := node(t, "10-vxlan0.conflist", `{"cniVersion": "1.1.0", "name": "vxlan0", "plugins": [{"type": "hnscni", "mode": "overlay", "network": "other",
	"ipam": {"type": "host-local", "subnet": "10.1.0.0/24"}}]}`)
	if err := os.WriteFile(filepath.Join(o.ConfDir, "20-pods.conflist"), []byte(hnscniList), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := findIPAM(o.ConfDir, "vxlan0", subnet)
	if err != nil || filepath.Base(in.Source) != "20-pods.conflist" {
		t.Errorf("chose %s (%v), want 20-pods.conflist, whose plugin names vxlan0", in.Source, err)
	}
}
