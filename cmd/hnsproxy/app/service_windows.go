//go:build windows

package app

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"
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
	h := &scmHandler{run: run, nonCrashRecovery: recoversNonCrashFailures, exit: os.Exit}
	if err := svc.Run(serviceName, h); err != nil {
		return fmt.Errorf("--windows-service: running under the Service Control Manager: %w (start it as a service, or drop the flag)", err)
	}
	return h.err
}

// scmHandler is the svc.Handler that supervises run.
type scmHandler struct {
	run func(context.Context) error
	err error // run's, once Execute returns
	// nonCrashRecovery reads the named service's failure-actions flag, and
	// exit ends the process, for endFailedService.
	nonCrashRecovery func(service string) (bool, error)
	exit             func(code int)
}

// accepted are the controls hnsproxy handles.
const accepted = svc.AcceptStop | svc.AcceptShutdown

// Execute reports the service's states to the SCM and turns its stop and
// shutdown into the end of run's context. A failure of run ends the
// service as its SCM restarts it (endFailedService): a service-specific
// exit code 1 where the service's failure-actions flag is set (sc.exe
// failureflag NAME 1; docs/operators.md, "Running as a Windows service"),
// else the process's exit, as kube-proxy's. args[0] is the name the
// service runs under, kube-proxy's where hnsproxy stands in for it.
func (h *scmHandler) Execute(args []string, requests <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	stopping := false
	decode := func(r svc.ChangeRequest) controlRequest {
		c := scmRequest(r)
		stopping = stopping || c == requestStop || c == requestShutdown
		return c
	}
	h.err = supervise(h.run, requests, decode, func(s serviceState) { status <- scmStatus(s) })
	if h.err != nil {
		klog.ErrorS(h.err, "hnsproxy stopped with an error")
		name := serviceName
		if len(args) > 0 {
			name = args[0]
		}
		endFailedService(stopping, func() (bool, error) { return h.nonCrashRecovery(name) }, h.exit)
		return true, 1
	}
	return false, 0
}

// endFailedService ends a service whose daemon failed by itself in the way
// its SCM restarts it, or returns for the failure to be reported. The SCM
// runs a service's recovery actions (sc.exe failure) when its process ends
// without reporting itself stopped, a crash; when it reports itself stopped
// with an exit code, a non-crash failure, only if the service's
// failure-actions flag is set (sc.exe failureflag NAME 1). kube-proxy under
// --windows-service ends as a crash (its service handler never reports a
// stop; the command's error exits the process), and launchers written for
// it count on that: kube-up's GCE nodes set restart actions for the
// kube-proxy service but no flag. So a failure is reported (exit code 1,
// which says more) only where nonCrashRecovery says the flag is set;
// otherwise, or where the flag cannot be read, the process exits with 1 at
// once. A failure while the SCM stops the service is reported all the same:
// a crash then would restart a service it was asked to stop.
func endFailedService(stopping bool, nonCrashRecovery func() (bool, error), exit func(code int)) {
	if stopping {
		return
	}
	recovers, err := nonCrashRecovery()
	if err == nil && recovers {
		return
	}
	if err != nil {
		klog.ErrorS(err, "Cannot read the service's failure-actions flag; exiting as a crash, which the SCM's recovery actions restart either way")
	}
	klog.Flush()
	exit(1)
}

// recoversNonCrashFailures reads the failure-actions flag of the service
// named name (sc.exe failureflag), asking the SCM for no more access than
// that takes.
func recoversNonCrashFailures(name string) (bool, error) {
	scm, err := windows.OpenSCManager(nil, nil, windows.SC_MANAGER_CONNECT)
	if err != nil {
		return false, fmt.Errorf("connecting to the Service Control Manager: %w", err)
	}
	defer func() { _ = windows.CloseServiceHandle(scm) }()
	utf16Name, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return false, err
	}
	h, err := windows.OpenService(scm, utf16Name, windows.SERVICE_QUERY_CONFIG)
	if err != nil {
		return false, fmt.Errorf("opening the service %q: %w", name, err)
	}
	s := &mgr.Service{Name: name, Handle: h}
	defer func() { _ = s.Close() }()
	return s.RecoveryActionsOnNonCrashFailures()
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
