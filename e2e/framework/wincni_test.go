//go:build linux

package framework

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSilentPluginExit runs plugins through libcni as WirePod does: only a
// run that exits non-zero with nothing on stdout or stderr counts as
// silent (so libcni's wording is pinned), not one that says why on either.
func TestSilentPluginExit(t *testing.T) {
	for name, tc := range map[string]struct {
		script string
		silent bool
	}{
		"nothing written":   {"exit 1", true},
		"stderr written":    {"echo 'wine: cannot start' >&2; exit 1", false},
		"CNI error written": {`echo '{"cniVersion":"1.1.0","code":11,"msg":"HNS unavailable"}'; exit 1`, false},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			plugin := "#!/bin/sh\ncat >/dev/null\n" + tc.script + "\n"
			if err := os.WriteFile(filepath.Join(dir, "plugin"), []byte(plugin), 0o755); err != nil {
				t.Fatal(err)
			}
			conf := []byte(`{"cniVersion":"1.1.0","name":"pods","plugins":[{"type":"plugin"}]}`)
			net, err := newPodNetwork(dir, filepath.Join(dir, "cache"), conf)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = net.add(context.Background(), "sandbox", "ns")
			if err == nil {
				t.Fatal("ADD succeeded")
			}
			if got := silentPluginExit(err); got != tc.silent {
				t.Errorf("silentPluginExit(%v) = %v, want %v", err, got, tc.silent)
			}
		})
	}
}

// TestSandboxMadeAnewAfterASilentExit wires pods through a plugin that
// exits without a word on its first ADD, as hnscni.exe once did under
// Wine: on the Windows lane the sandbox is torn down (CNI DEL, its HNS
// namespace deleted) and made anew once, and the exit is recorded; a
// second silent exit in a row, or one off the lane, fails the pod.
func TestSandboxMadeAnewAfterASilentExit(t *testing.T) {
	bin, err := Tools()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hns, err := startHNSSim(context.Background(), filepath.Join(bin, HNSSimBin), dir, "win-a", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hns.Stop() })
	// Each ADD takes one token from silent-exits (a line each) and exits
	// silently while there is one; DELs are logged with their namespace.
	plugin := `#!/bin/sh
cat >/dev/null
d=$(dirname "$0")
if [ "$CNI_COMMAND" = DEL ]; then echo "$CNI_CONTAINERID $CNI_NETNS" >>"$d/dels"; exit 0; fi
if [ -s "$d/silent-exits" ]; then sed -i 1d "$d/silent-exits"; exit 1; fi
echo '{"cniVersion":"1.1.0","ips":[{"address":"10.244.1.10/24"}]}'
`
	if err := os.WriteFile(filepath.Join(dir, "plugin"), []byte(plugin), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := []byte(`{"cniVersion":"1.1.0","name":"pods","plugins":[{"type":"plugin"}]}`)
	newNode := func(underWine bool, silentExits int) *Node {
		if err := os.WriteFile(filepath.Join(dir, "silent-exits"), []byte(strings.Repeat("x\n", silentExits)), 0o644); err != nil {
			t.Fatal(err)
		}
		net, err := newPodNetwork(dir, filepath.Join(dir, "cache"), conf)
		if err != nil {
			t.Fatal(err)
		}
		net.underWine = underWine
		return &Node{Spec: NodeSpec{Name: "win-a"}, Sim: hns, net: net}
	}
	namespaces := func() int {
		snap, err := hns.Dump(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return len(snap.Namespaces)
	}

	n := newNode(true, 1)
	p, err := n.WirePod(context.Background(), "web-0")
	if err != nil {
		t.Fatalf("WirePod after one silent exit: %v", err)
	}
	if len(n.SilentPluginExits) != 1 || len(n.Pods) != 1 || p.IP.String() != "10.244.1.10" {
		t.Errorf("pod %+v, pods %d, silent exits %q; want the pod wired once with one exit recorded", p, len(n.Pods), n.SilentPluginExits)
	}
	dels, _ := os.ReadFile(filepath.Join(dir, "dels"))
	if lines := strings.Fields(string(dels)); len(lines) != 2 || lines[0] != "web-0" || lines[1] == p.Namespace {
		t.Errorf("DELs %q; want one for web-0's first sandbox, not its second (%s)", dels, p.Namespace)
	}
	if got := namespaces(); got != 1 {
		t.Errorf("%d HNS namespaces; want the second sandbox's only", got)
	}

	for _, tc := range []struct {
		name        string
		underWine   bool
		silentExits int
	}{{"twice on the lane", true, 2}, {"off the lane", false, 1}} {
		name, n := tc.name, newNode(tc.underWine, tc.silentExits)
		if _, err := n.WirePod(context.Background(), "web-1"); err == nil || !silentPluginExit(err) {
			t.Errorf("%s: WirePod: %v; want the silent exit", name, err)
		}
		if len(n.Pods) != 0 {
			t.Errorf("%s: %d pods wired", name, len(n.Pods))
		}
	}
}
