//go:build linux

package framework

import (
	"crypto/x509"
	"encoding/csv"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestWindowsNodeObject(t *testing.T) {
	n := WindowsNode{
		Name:        "win-a",
		PodCIDRs:    []string{"10.244.1.0/24", "fd00:10:244:1::/64"},
		InternalIPs: []string{"10.240.0.10"},
		Labels:      map[string]string{"topology.kubernetes.io/zone": "z1"},
	}
	obj, err := n.Object()
	if err != nil {
		t.Fatal(err)
	}
	if obj.Spec.PodCIDR != "10.244.1.0/24" || !slices.Equal(obj.Spec.PodCIDRs, n.PodCIDRs) {
		t.Errorf("pod CIDRs %q %v, want primary %s and %v", obj.Spec.PodCIDR, obj.Spec.PodCIDRs, n.PodCIDRs[0], n.PodCIDRs)
	}
	for k, want := range map[string]string{
		corev1.LabelOSStable: "windows", corev1.LabelHostname: "win-a", "topology.kubernetes.io/zone": "z1",
	} {
		if got := obj.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	wantAddrs := []corev1.NodeAddress{
		{Type: corev1.NodeHostName, Address: "win-a"},
		{Type: corev1.NodeInternalIP, Address: "10.240.0.10"},
	}
	if !slices.Equal(obj.Status.Addresses, wantAddrs) {
		t.Errorf("addresses %v, want %v", obj.Status.Addresses, wantAddrs)
	}
	if len(obj.Status.Conditions) != 1 || obj.Status.Conditions[0].Type != corev1.NodeReady || obj.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("conditions %v, want Ready=True", obj.Status.Conditions)
	}

	for name, bad := range map[string]WindowsNode{
		"no name":        {PodCIDRs: []string{"10.244.1.0/24"}},
		"no pod CIDR":    {Name: "w"},
		"bad pod CIDR":   {Name: "w", PodCIDRs: []string{"10.244.1.0"}},
		"bad address IP": {Name: "w", PodCIDRs: []string{"10.244.1.0/24"}, InternalIPs: []string{"10.240.0.300"}},
	} {
		if _, err := bad.Object(); err == nil {
			t.Errorf("%s: Object() succeeded, want an error", name)
		}
	}
}

// TestCredentials checks the files the apiserver and the clients are given
// agree: token file rows, kubeconfig tokens, and a serving certificate that
// the kubeconfig's CA verifies for both loopback addresses.
func TestCredentials(t *testing.T) {
	dir := t.TempDir()
	if err := writePKI(dir); err != nil {
		t.Fatal(err)
	}
	tokens, err := writeTokenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	const server = "https://127.0.0.1:6443"
	if err := writeKubeconfigs(dir, server, tokens); err != nil {
		t.Fatal(err)
	}

	f, err := os.Open(filepath.Join(dir, tokenFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{tokens[adminUser.name], adminUser.name, adminUser.name, "system:masters"},
		{tokens[kubeProxyUser.name], "system:kube-proxy", "system:kube-proxy"}, // no groups column at all
	}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("token file rows %q, want %q", rows, want)
	}
	if tokens[adminUser.name] == tokens[kubeProxyUser.name] {
		t.Error("admin and kube-proxy share a token")
	}

	serving := readCert(t, filepath.Join(dir, servingCertFile))
	for _, u := range users {
		cfg, err := restConfig(dir, u)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Host != server || cfg.BearerToken != tokens[u.name] {
			t.Errorf("%s kubeconfig: host %s token %q, want %s and its own token", u.name, cfg.Host, cfg.BearerToken, server)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(cfg.CAData) {
			t.Fatalf("%s kubeconfig has no CA data", u.name)
		}
		for _, host := range []string{"127.0.0.1", "::1", "localhost"} {
			if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
				t.Errorf("%s kubeconfig CA does not verify the serving cert for %s: %v", u.name, host, err)
			}
		}
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s: no PEM block", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// TestProcessLifecycle runs a real child and checks that stop ends it and
// that a PID found again is only trusted while it runs the expected binary.
func TestProcessLifecycle(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "sleep.log")
	p, err := startProcess("sleep", sleep, []string{"600"}, nil, logPath, false)
	if err != nil {
		t.Fatal(err)
	}
	if !p.alive() {
		t.Fatal("child not alive after start")
	}
	if !findProcess("sleep", sleep, p.pid, logPath).alive() {
		t.Error("found again by PID and binary, the child is not alive")
	}
	if findProcess("etcd", "/nonexistent/etcd", p.pid, logPath).alive() {
		t.Error("a PID running another binary counts as alive")
	}
	if err := p.stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.alive() || findProcess("sleep", sleep, p.pid, logPath).alive() {
		t.Error("child alive after stop")
	}
	if err := p.stop(time.Second); err != nil {
		t.Errorf("second stop: %v", err)
	}
}

// TestProcessDiesWithCaller runs this test binary as a caller that starts a
// child and exits without stopping it: the kernel must kill the child, as it
// would an apiserver left behind by a test that timed out.
func TestProcessDiesWithCaller(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	// The caller exits without running cleanups, so it logs into the
	// test's own temporary directory, which it is handed.
	if callerLog := os.Getenv("FRAMEWORK_TEST_CALLER_LOG"); callerLog != "" {
		p, err := startProcess("sleep", sleep, []string{"600"}, nil, callerLog, false)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("child pid", p.pid)
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProcessDiesWithCaller$")
	logPath := filepath.Join(t.TempDir(), "sleep.log")
	cmd.Env = append(os.Environ(), "FRAMEWORK_TEST_CALLER_LOG="+logPath)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("caller: %v", err)
	}
	var pid int
	if _, err := fmt.Sscanf(string(out), "child pid %d", &pid); err != nil {
		t.Fatalf("caller printed %q: %v", out, err)
	}
	child := findProcess("sleep", sleep, pid, logPath)
	if !child.waitExit(time.Minute) {
		_ = child.stop(time.Second)
		t.Fatalf("child %d outlived its caller", pid)
	}
}

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "hack", "controlplane", "go.mod")); err != nil {
		t.Errorf("RepoRoot() = %s, which lacks the control plane module: %v", root, err)
	}
}
