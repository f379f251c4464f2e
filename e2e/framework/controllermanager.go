//go:build linux

package framework

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

const controllerManagerName = "kube-controller-manager"

// ControllerManager is a running kube-controller-manager beside a control
// plane (only the controllers a caller names), so that objects such as
// EndpointSlices come from the real controllers, not from the tests.
type ControllerManager struct {
	Port int
	proc *process
}

// StartControllerManager runs kube-controller-manager from the control
// plane's bin folder (hack/build-controlplane.sh builds it when
// CONTROLLER_MANAGER=1) with only controllers, as the admin user, serving
// on 127.0.0.1, and waits for its /healthz. Extra flags follow the rig's.
func (c *ControlPlane) StartControllerManager(ctx context.Context, controllers []string, extra ...string) (*ControllerManager, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--kubeconfig=" + c.AdminKubeconfig(),
		"--controllers=" + strings.Join(controllers, ","),
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + c.file("controller-manager-certs"),
		// /healthz is in the default always-allowed paths; no delegated
		// authentication is configured, so none is looked up.
		"--authentication-skip-lookup",
	}, extra...)
	proc, err := startProcess(controllerManagerName, c.bin(controllerManagerName), args, nil, c.logPath(controllerManagerName), false)
	if err != nil {
		return nil, err
	}
	m := &ControllerManager{Port: port, proc: proc}
	// Its serving certificate is self-signed in cert-dir; loopback only.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	readyCtx, cancel := context.WithTimeout(ctx, apiReadyWait)
	defer cancel()
	if err := proc.waitReady(readyCtx, func(ctx context.Context) error {
		return httpGetOK(ctx, client, fmt.Sprintf("https://127.0.0.1:%d/healthz", port), "ok")
	}); err != nil {
		return nil, errors.Join(err, proc.stop(stopGrace))
	}
	return m, nil
}

// PID is the process id, 0 when stopped.
func (m *ControllerManager) PID() int {
	if !m.proc.alive() {
		return 0
	}
	return m.proc.pid
}

// Stop sends SIGTERM and waits for the exit.
func (m *ControllerManager) Stop() error { return m.proc.stop(stopGrace) }
