package cni_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
)

// TestStatusAnswersNotAvailableWhereIPAMCannotServeADD: STATUS means
// "ready to service ADD", and an IPAM plugin that is not installed yet (a
// node whose CNI binaries an install container still copies) or whose own
// STATUS fails leaves ADD unable to work: STATUS answers code 50 (the
// spec's "cannot service ADD"), naming the IPAM and its error, not the
// IPAM's code or 999. An IPAM's own 50 or 51 ("existing containers may
// have limited connectivity") stays as it is, and one that predates
// STATUS (code 1) does not make the plugin unready.
func TestStatusAnswersNotAvailableWhereIPAMCannotServeADD(t *testing.T) {
	_, l2 := l2bridgeNode(t, 73)
	ipamDir := shortDir(t)
	for name, statusErr := range map[string]string{
		"failing-ipam": `{"cniVersion": "1.1.0", "code": 999, "msg": "datastore unreachable"}`,
		"config-ipam":  `{"cniVersion": "1.1.0", "code": 7, "msg": "no ranges"}`,
		"limited-ipam": `{"cniVersion": "1.1.0", "code": 51, "msg": "limited"}`,
		"old-ipam":     `{"cniVersion": "1.1.0", "code": 1, "msg": "incompatible CNI versions"}`,
	} {
		script := "#!/bin/sh\nif [ \"$CNI_COMMAND\" = STATUS ]; then echo '" + statusErr + "'; exit 1; fi\nexec " + filepath.Join(binDir, "host-local") + "\n"
		if err := os.WriteFile(filepath.Join(ipamDir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cni := libcni.NewCNIConfigWithCacheDir([]string{binDir, ipamDir}, t.TempDir(), nil)
	for _, tc := range []struct {
		ipam string
		code int // 0: ready
		says string
	}{
		{"missing-ipam", int(types.ErrPluginNotAvailable), `"missing-ipam"`},
		{"failing-ipam", int(types.ErrPluginNotAvailable), "datastore unreachable"},
		{"config-ipam", int(types.ErrPluginNotAvailable), "no ranges"},
		{"limited-ipam", int(types.ErrLimitedConnectivity), "limited"},
		{"old-ipam", 0, ""},
		{"host-local", 0, ""},
	} {
		c := l2
		c.extra = map[string]any{"ipam": map[string]any{"type": tc.ipam, "ranges": [][]map[string]string{{{"subnet": l2.subnet}}}, "dataDir": l2.dataDir}}
		list, err := libcni.NetworkConfFromBytes(c.listJSON(t))
		if err != nil {
			t.Fatal(err)
		}
		err = cni.GetStatusNetworkList(context.Background(), list)
		if cniCode(err) != tc.code && !(tc.code == 0 && err == nil) {
			t.Errorf("STATUS with IPAM %s: %v (code %d), want code %d", tc.ipam, err, cniCode(err), tc.code)
		}
		if err != nil && !strings.Contains(err.Error(), tc.says) {
			t.Errorf("STATUS with IPAM %s: %v, want it to say %s", tc.ipam, err, tc.says)
		}
	}
}
