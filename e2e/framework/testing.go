//go:build linux

package framework

import (
	"context"
	"os"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// StartForTest starts a control plane in t.TempDir() that is stopped when
// the test ends (and killed by the kernel if the test binary dies first).
// A failure to start fails the test, with the server log's tail.
func StartForTest(t testing.TB) *ControlPlane {
	t.Helper()
	cp, err := Start(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatalf("starting control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping control plane: %v", err)
		}
	})
	return cp
}

// AdminClient is a clientset for a system:masters user; it fails t on error.
func (c *ControlPlane) AdminClient(t testing.TB) kubernetes.Interface {
	t.Helper()
	return mustClientset(t, c.AdminConfig)
}

// KubeProxyClient is a clientset for the user system:kube-proxy; it fails t
// on error.
func (c *ControlPlane) KubeProxyClient(t testing.TB) kubernetes.Interface {
	t.Helper()
	return mustClientset(t, c.KubeProxyConfig)
}

func mustClientset(t testing.TB, config func() (*rest.Config, error)) kubernetes.Interface {
	t.Helper()
	cfg, err := config()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// StartClusterForTest starts a control plane and the simulated Windows
// nodes of spec, all stopped when the test ends. The nodes' folders (logs
// included) are in a temp dir; failing tests log where.
//
// A Windows-lane spec skips the test, saying so, where the lane may not
// run (EnvSkipWindowsLane, or no Wine off CI); with CI set it fails instead.
func StartClusterForTest(t testing.TB, spec ClusterSpec) *Cluster {
	t.Helper()
	if spec.Windows {
		_, err := spec.prepareWine()
		skip, err := windowsLaneSkip(err)
		if err != nil {
			t.Fatalf("windows lane: %v", err)
		}
		if skip != "" {
			t.Skip("SKIP: " + skip)
		}
	}
	cp := StartForTest(t)
	dir, err := os.MkdirTemp("", "e2e")
	if err != nil {
		t.Fatal(err)
	}
	c, err := StartCluster(context.Background(), cp, spec, dir)
	if err != nil {
		t.Fatalf("starting cluster (files in %s): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stopping cluster: %v", err)
		}
		for _, n := range c.Nodes {
			if crash := crashIn(n.Proxy.LogPath()); crash != "" {
				t.Errorf("node %s: hnsproxy crashed: %s", n.Name(), crash)
			}
			for _, exit := range n.SilentPluginExits {
				t.Logf("node %s: a sandbox made anew after hnscni.exe exited without a word under Wine: %s", n.Name(), exit)
			}
		}
		if t.Failed() {
			t.Logf("cluster files (logs) kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	return c
}

// crashIn returns the first line of a Go panic or fatal error in a log.
func crashIn(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
			return line
		}
	}
	return ""
}
