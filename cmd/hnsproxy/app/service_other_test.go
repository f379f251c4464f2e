//go:build !windows

package app

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// Off Windows --windows-service is refused with what to do, before
// anything starts, with or without --config.
func TestWindowsServiceRefusedOffWindows(t *testing.T) {
	for _, args := range [][]string{
		{"--windows-service", "--hns-endpoint=sim", "--network-name=cbr0"},
		{"--config=" + writeFile(t, "config.yaml", "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nwindowsRunAsService: true\nwinkernel:\n  networkName: cbr0\n"), "--hns-endpoint=sim", "--windows-service"},
	} {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
		cmd.Env = append(os.Environ(), runAsHNSProxy+"=1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if err == nil || !strings.Contains(out.String(), "Windows Service Control Manager, which "+runtime.GOOS+" does not have: drop the flag") {
			t.Errorf("%v: %v, output:\n%s\nwant a refusal naming the Service Control Manager", args, err, out.String())
		}
		if strings.Contains(out.String(), "Starting hnsproxy") {
			t.Errorf("%v: the daemon started before the refusal:\n%s", args, out.String())
		}
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := t.TempDir() + "/" + name
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
