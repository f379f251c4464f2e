package cni_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
)

// sandbox runs hnscni with its working directory, HOME and TMPDIR in
// directories the test watches, so that any file the plugin writes outside
// the IPAM data directory is seen.
type sandbox struct {
	cwd, home, tmp string
	stderr         string // of the last run
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	root := t.TempDir()
	s := &sandbox{cwd: filepath.Join(root, "cwd"), home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp")}
	for _, d := range []string{s.cwd, s.home, s.tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// run executes hnscni with env over a base ADD environment; it returns the
// CNI error (nil on success) and stdout.
func (s *sandbox) run(t *testing.T, env map[string]string, stdin []byte) (*types.Error, []byte) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "hnscni"))
	cmd.Dir = s.cwd
	base := map[string]string{"CNI_PATH": binDir, "CNI_IFNAME": "eth0", "CNI_CONTAINERID": "c1", "CNI_COMMAND": "ADD", "HOME": s.home, "TMPDIR": s.tmp}
	for k, v := range env {
		base[k] = v
	}
	for k, v := range base {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	s.stderr = stderr.String()
	if err == nil {
		return nil, stdout.Bytes()
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatal(err)
	}
	var te types.Error
	if jerr := json.Unmarshal(stdout.Bytes(), &te); jerr != nil {
		t.Fatalf("exit %d without a CNI error on stdout: %q", ee.ExitCode(), stdout.String())
	}
	return &te, stdout.Bytes()
}

// assertUntouched fails if the plugin left anything in the watched directories.
func (s *sandbox) assertUntouched(t *testing.T) {
	t.Helper()
	for _, d := range []string{s.cwd, s.home, s.tmp} {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			t.Errorf("hnscni wrote %s", filepath.Join(d, e.Name()))
		}
	}
}

// TestHostileAttachmentNames is hnscni's part of the bad-input table:
// path-like and overlong container IDs and interface names are refused
// with ErrInvalidEnvironmentVariables before anything happens; a path-like
// network name in the configuration is refused as invalid configuration; a
// very long but valid container ID works end to end. Nothing is written
// outside the IPAM data directory, and nothing is left in HNS or IPAM.
func TestHostileAttachmentNames(t *testing.T) {
	n1 := startNode(t, "n1", "--node-ip", "192.168.50.1",
		"--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.5.0/24")
	conf := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.5.0/24", socket: n1.socket, dataDir: t.TempDir()}
	ns := n1.createNamespace(t)
	sb := newSandbox(t)
	for _, c := range []struct {
		name  string
		env   map[string]string
		stdin []byte
		code  uint
	}{
		{"container ID ../x", map[string]string{"CNI_CONTAINERID": "../x"}, nil, types.ErrInvalidEnvironmentVariables},
		{"container ID a/b", map[string]string{"CNI_CONTAINERID": "a/b"}, nil, types.ErrInvalidEnvironmentVariables},
		{`container ID ..\x`, map[string]string{"CNI_CONTAINERID": `..\x`}, nil, types.ErrInvalidEnvironmentVariables},
		{"container ID with a newline", map[string]string{"CNI_CONTAINERID": "c1\nc2"}, nil, types.ErrInvalidEnvironmentVariables},
		{"empty container ID", map[string]string{"CNI_CONTAINERID": ""}, nil, types.ErrInvalidEnvironmentVariables},
		{"interface name ..", map[string]string{"CNI_IFNAME": ".."}, nil, types.ErrInvalidEnvironmentVariables},
		{"interface name a/b", map[string]string{"CNI_IFNAME": "a/b"}, nil, types.ErrInvalidEnvironmentVariables},
		{`interface name a\b`, map[string]string{"CNI_IFNAME": `a\b`}, nil, types.ErrInvalidEnvironmentVariables},
		{"interface name of 16 bytes", map[string]string{"CNI_IFNAME": strings.Repeat("e", 16)}, nil, types.ErrInvalidEnvironmentVariables},
		{"network name ../x", nil, []byte(strings.Replace(string(conf.pluginJSON(t)), `"name":"pods"`, `"name":"../x"`, 1)), types.ErrInvalidNetworkConfig},
		// host-local keeps its state in a directory named after the network:
		// a name beyond NAME_MAX fails there, cleanly.
		{"network name of 300 bytes", nil, []byte(strings.Replace(string(conf.pluginJSON(t)), `"name":"pods"`, `"name":"`+strings.Repeat("n", 300)+`"`, 1)), types.ErrInternal},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"CNI_NETNS": ns}
			for k, v := range c.env {
				env[k] = v
			}
			stdin := c.stdin
			if stdin == nil {
				stdin = conf.pluginJSON(t)
			}
			err, _ := sb.run(t, env, stdin)
			if err == nil || err.Code != c.code || err.Msg == "" {
				t.Fatalf("error %.300v, want code %d with a message", err, c.code)
			}
		})
	}

	// A 4096-character container ID is valid CNI: ADD, CHECK, GC and DEL work.
	long := strings.Repeat("a", 4096)
	env := map[string]string{"CNI_CONTAINERID": long, "CNI_NETNS": ns}
	err, result := sb.run(t, env, conf.pluginJSON(t))
	if err != nil {
		t.Fatalf("ADD with a long container ID: %+v", err)
	}
	if e := endpointByName(n1.dump(t), long+"_cbr0"); e == nil {
		t.Fatalf("no endpoint named after the long container ID; have %v", names(n1.dump(t)))
	}
	var withPrev map[string]any
	if err := json.Unmarshal(conf.pluginJSON(t), &withPrev); err != nil {
		t.Fatal(err)
	}
	withPrev["prevResult"] = json.RawMessage(result)
	check, jerr := json.Marshal(withPrev)
	if jerr != nil {
		t.Fatal(jerr)
	}
	env["CNI_COMMAND"] = "CHECK"
	if err, _ := sb.run(t, env, check); err != nil {
		t.Errorf("CHECK with a long container ID: %+v", err)
	}
	env["CNI_COMMAND"] = "DEL"
	if err, _ := sb.run(t, env, conf.pluginJSON(t)); err != nil {
		t.Fatalf("DEL with a long container ID: %+v", err)
	}
	gc := conf
	gc.extra = map[string]any{"cni.dev/valid-attachments": []any{}}
	if err, _ := sb.run(t, map[string]string{"CNI_COMMAND": "GC"}, gc.pluginJSON(t)); err != nil {
		t.Errorf("GC: %+v", err)
	}

	if s := n1.dump(t); len(s.Endpoints) != 0 {
		t.Errorf("endpoints left behind: %v", names(s))
	}
	if got := allocated(t, conf.dataDir); len(got) != 0 {
		t.Errorf("addresses left behind: %v", got)
	}
	sb.assertUntouched(t)
}

// TestInterfaceNamesWithUnderscores is the regression test for a bug the
// fuzzer found: endpoint names were "<containerID>_<ifname>", so the
// attachments (c1, eth_0) and (c1_eth, 0) shared one endpoint (the second
// ADD removed the first pod's endpoint as stale), GC released the address
// of the wrong attachment, and an interface named "net_" was never
// collected. The names are now "<containerID>_<network>:<ifname>" for
// interfaces other than eth0; all three attachments live side by side and
// GC collects exactly the ones the runtime no longer lists, with their
// addresses.
func TestInterfaceNamesWithUnderscores(t *testing.T) {
	n1, conf := l2bridgeNode(t, 6)
	sb := newSandbox(t)
	attachments := [][2]string{{"c1", "eth_0"}, {"c1_eth", "0"}, {"c2", "net_"}}
	for _, a := range attachments {
		if err, _ := sb.run(t, map[string]string{"CNI_CONTAINERID": a[0], "CNI_IFNAME": a[1], "CNI_NETNS": n1.createNamespace(t)}, conf.pluginJSON(t)); err != nil {
			t.Fatalf("ADD %v: %+v", a, err)
		}
	}
	if s := n1.dump(t); len(s.Endpoints) != 3 || len(allocated(t, conf.dataDir)) != 3 {
		t.Fatalf("three attachments made endpoints %v and addresses %v", names(s), allocated(t, conf.dataDir))
	}
	keep := endpointByName(n1.dump(t), "c1_eth_cbr0:0").IP()

	gc := conf
	gc.extra = map[string]any{"cni.dev/valid-attachments": []map[string]string{{"containerID": "c1_eth", "ifname": "0"}}}
	if err, _ := sb.run(t, map[string]string{"CNI_COMMAND": "GC"}, gc.pluginJSON(t)); err != nil {
		t.Fatalf("GC: %+v", err)
	}
	s := n1.dump(t)
	if len(s.Endpoints) != 1 || s.Endpoints[0].Name != "c1_eth_cbr0:0" {
		t.Fatalf("after GC endpoints %v, want only c1_eth_cbr0:0", names(s))
	}
	if got := allocated(t, conf.dataDir); len(got) != 1 || got[0] != keep {
		t.Errorf("after GC addresses %v, want only %s (the listed attachment's)", got, keep)
	}
	sb.assertUntouched(t)
}
