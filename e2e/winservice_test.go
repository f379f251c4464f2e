//go:build e2e

package e2e

import (
	"context"
	"testing"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// checkWindowsService runs node n's hnsproxy.exe as a Windows service under
// Wine's Service Control Manager (--windows-service), as an install without
// HostProcess containers does. Started by `sc start`, it adopts what the
// node's hnsproxy programmed without an HNS write and programs a new
// Service; `sc stop` is a graceful shutdown (STOPPED, exit codes 0), after
// which hnsproxy started as before again writes nothing.
func checkWindowsService(t *testing.T, c *framework.Cluster, n *framework.Node, web []framework.Pod) {
	ctx := context.Background()
	var svc *framework.WindowsService
	checkNoWrites(t, c, n, "start as a Windows service", func() error {
		if err := n.Proxy.Stop(); err != nil {
			return err
		}
		var err error
		svc, err = n.Proxy.StartAsWindowsService(ctx, "hnsproxy")
		return err
	})
	stopped := false
	defer func() {
		if !stopped {
			_, _ = svc.Stop()
		}
	}()
	if st, err := svc.Query(); err != nil || st.State != "RUNNING" {
		t.Fatalf("node %s: sc query: %+v %v, want RUNNING", n.Name(), st, err)
	}
	pid := svc.PID()
	if pid == 0 {
		t.Fatalf("node %s: no %s process in the service's Wine prefix", n.Name(), framework.HNSProxyExe)
	}
	t.Logf("node %s: %s (pid %d) runs as the Windows service %q", n.Name(), framework.HNSProxyExe, pid, svc.Name)

	late := apply(t, c, service("web", "as-service", "", 83, 8080), framework.Backends(web))
	all := backends(local(onNode(web, n.Name())...), remote(notOnNode(web, n.Name())...))
	expectLBs(t, c, n, late, lb("ClusterIP", frontend(late.Spec.ClusterIP, 83, "TCP", 8080), flags("DSR"), all...))

	st, err := svc.Stop()
	stopped = true
	if err != nil {
		t.Fatalf("node %s: sc stop: %v", n.Name(), err)
	}
	if st.Win32ExitCode != 0 || st.ServiceExitCode != 0 {
		t.Errorf("node %s: the service stopped with %+v, want exit codes 0 (a graceful stop)", n.Name(), st)
	}
	if pid := svc.PID(); pid != 0 {
		t.Errorf("node %s: %s (pid %d) still runs after sc stop", n.Name(), framework.HNSProxyExe, pid)
	}
	checkNoWrites(t, c, n, "start after the service stopped", func() error { return n.Proxy.Start(ctx) })
}
