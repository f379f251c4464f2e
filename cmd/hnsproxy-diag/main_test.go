package main

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

func TestWriteOutputs(t *testing.T) {
	text := func(w io.Writer) error { _, err := io.WriteString(w, "as text\n"); return err }
	var b bytes.Buffer
	if err := write(&b, "table", struct{ A int }{1}, text); err != nil || b.String() != "as text\n" {
		t.Errorf("table: %q, %v", b.String(), err)
	}
	b.Reset()
	if err := write(&b, "json", struct{ A int }{1}, text); err != nil || b.String() != "{\n  \"A\": 1\n}\n" {
		t.Errorf("json: %q, %v", b.String(), err)
	}
	if err := write(&b, "yaml", nil, text); err == nil || !strings.Contains(err.Error(), "want table or json") {
		t.Errorf("yaml: %v", err)
	}
}

// TestTraceNeedsSourceAndDestination: the trace refuses to start without
// --src and --dst, and a malformed --dst is a clear error.
func TestTraceNeedsSourceAndDestination(t *testing.T) {
	for args, want := range map[string]string{
		"trace --src 10.244.1.5":                          `required flag(s) "dst" not set`,
		"trace --src 10.244.1.5 --dst svc:80/tcp":         `destination: "svc:80" is not IP[:PORT]`,
		"trace --src 10.244.1.5 --dst 10.96.0.10:53/sctp": `protocol "sctp"`,
	} {
		cmd := newCommand()
		cmd.SetArgs(strings.Fields(args))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}

// TestUnknownOutputIsRefusedFirst: an --output the command cannot write is
// refused before it reads HNS and the API server (each up to a minute on a
// node whose HNS hangs), not after.
func TestUnknownOutputIsRefusedFirst(t *testing.T) {
	for _, args := range []string{"-o yaml", "trace --src 10.244.1.5 --dst 10.96.0.10:80/tcp -o yaml"} {
		cmd := newCommand()
		// No HNS to read here: a read would fail first and say so.
		cmd.SetArgs(append(strings.Fields(args), "--hns-endpoint=sim", "--network-name=cbr0", "--hostname-override=win-1"))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), `--output "yaml"`) {
			t.Errorf("%s: %v, want the --output refused", args, err)
		}
	}
}

// TestKubeconfigOfTheHostProcessPod: in the hnsproxy pod the kubeconfig
// deploy/ mounts names its CA and token below
// %CONTAINER_SANDBOX_MOUNT_POINT%; hnsproxy-diag finds them there as the
// daemon does, so the documented kubectl exec line reaches the API server.
func TestKubeconfigOfTheHostProcessPod(t *testing.T) {
	// The kubeconfig, CA and token the daemon's own test reads.
	root, err := filepath.Abs("../hnsproxy/app/kubeapi/testdata/hostprocess")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(root, "kubeconfig.conf")
	getenv := func(k string) string {
		if k == options.SandboxMountPointEnv {
			return root + "/"
		}
		return ""
	}
	rc, err := restConfig(&options.Config{Kubeconfig: kubeconfig}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if rc.TLSClientConfig.CAFile != root+"/ca.crt" || rc.BearerTokenFile != root+"/token" {
		t.Errorf("CA %q token file %q; want them below %s", rc.TLSClientConfig.CAFile, rc.BearerTokenFile, root)
	}
}

// TestExitCodes: 0 when nothing is to correct, 2 when the table has rows
// hnsproxy would correct (scripts tell the two apart), 1 for an error.
func TestExitCodes(t *testing.T) {
	for err, want := range map[error]int{nil: 0, differences(3): exitDifferences, errors.New("listing Services: forbidden"): 1} {
		if got := exitCode(err); got != want {
			t.Errorf("exitCode(%v) = %d, want %d", err, got, want)
		}
	}
}

// TestNoKubeconfigSaysWhatToGive: on the host, outside the hnsproxy pod,
// without a kubeconfig the error says which flag gives one, not only that
// the in-cluster variables are unset.
func TestNoKubeconfigSaysWhatToGive(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	if _, err := restConfig(&options.Config{}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "give --kubeconfig") {
		t.Errorf("no kubeconfig, outside a pod: %v, want it to say to give --kubeconfig", err)
	}
}
