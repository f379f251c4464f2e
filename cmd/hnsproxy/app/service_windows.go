//go:build windows

package app

import (
	"context"
	"fmt"

	"golang.org/x/sys/windows/svc"
	"k8s.io/klog/v2"
)

// serviceName is what hnsproxy passes to the SCM; a service in its own
// process (what sc.exe create makes) runs under whatever name it was
// installed as.
const serviceName = "hnsproxy"

// runAsWindowsService runs run under the Windows Service Control Manager,
// as kube-proxy's --windows-service does: the SCM's stop and shutdown are a
// graceful shutdown of run.
func runAsWindowsService(run func(context.Context) error) error {
	h := &scmHandler{run: run}
	if err := svc.Run(serviceName, h); err != nil {
		return fmt.Errorf("--windows-service: running under the Service Control Manager: %w (start it as a service, or drop the flag)", err)
	}
	return h.err
}

// scmHandler is the svc.Handler that supervises run.
type scmHandler struct {
	run func(context.Context) error
	err error // run's, once Execute returns
}

// accepted are the controls hnsproxy handles.
const accepted = svc.AcceptStop | svc.AcceptShutdown

// Execute reports the service's states to the SCM and turns its stop and
// shutdown into the end of run's context. A failure of run is a
// service-specific exit code 1, which the SCM's recovery actions restart
// only when the service's failure-actions flag is set (sc.exe failureflag
// NAME 1; docs/operators.md, "Running as a Windows service").
func (h *scmHandler) Execute(_ []string, requests <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	h.err = supervise(h.run, requests, scmRequest, func(s serviceState) { status <- scmStatus(s) })
	if h.err != nil {
		klog.ErrorS(h.err, "hnsproxy stopped with an error")
		return true, 1
	}
	return false, 0
}

// scmRequest decodes the SCM's control requests.
func scmRequest(r svc.ChangeRequest) controlRequest {
	switch r.Cmd {
	case svc.Interrogate:
		return requestInterrogate
	case svc.Stop:
		return requestStop
	case svc.Shutdown:
		return requestShutdown
	}
	return requestIgnored
}

// scmStatus is a serviceState as the SCM reads it.
func scmStatus(s serviceState) svc.Status {
	switch s {
	case stateRunning:
		return svc.Status{State: svc.Running, Accepts: accepted}
	case stateStopPending:
		return svc.Status{State: svc.StopPending}
	}
	return svc.Status{State: svc.StartPending}
}
