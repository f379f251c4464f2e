//go:build windows

package app

import (
	"context"
	"fmt"
	"os"

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
	h := &scmHandler{run: run, exit: os.Exit}
	if err := svc.Run(serviceName, h); err != nil {
		return fmt.Errorf("--windows-service: running under the Service Control Manager: %w (start it as a service, or drop the flag)", err)
	}
	return h.err
}

// scmHandler is the svc.Handler that supervises run.
type scmHandler struct {
	run func(context.Context) error
	err error // run's, once Execute returns
	// exit ends the process, for endFailedService.
	exit func(code int)
}

// accepted are the controls hnsproxy handles.
const accepted = svc.AcceptStop | svc.AcceptShutdown

// Execute reports the service's states to the SCM and turns its stop and
// shutdown into the end of run's context. A failure of run that no stop
// asked for ends the process as a crash, which the SCM restarts
// (endFailedService); one while the SCM stops the service is reported, a
// service-specific exit code 1.
func (h *scmHandler) Execute(_ []string, requests <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	stopping := false
	decode := func(r svc.ChangeRequest) controlRequest {
		c := scmRequest(r)
		stopping = stopping || c == requestStop || c == requestShutdown
		return c
	}
	h.err = supervise(h.run, requests, decode, func(s serviceState) { status <- scmStatus(s) })
	if h.err != nil {
		klog.ErrorS(h.err, "hnsproxy stopped with an error")
		endFailedService(stopping, h.exit)
		return true, 1
	}
	return false, 0
}

// endFailedService ends a service whose daemon failed by itself in the way
// its SCM restarts it, or returns for a failure during a stop to be
// reported. The SCM runs a service's recovery actions (sc.exe failure) when
// its process ends without reporting itself stopped, a crash, whatever the
// service's failure-actions flag; a stop reported with an exit code, a
// non-crash failure, only where that flag is in effect, and Microsoft's
// reference (SERVICE_FAILURE_ACTIONS_FLAG) says a change of the flag takes
// effect from the next boot: a service installed with sc.exe failureflag
// and started without a reboot would read the flag set and still not be
// restarted. kube-proxy under --windows-service ends as a crash too (its
// service handler never reports a stop; the command's error exits the
// process), and launchers written for it count on that: kube-up's GCE
// nodes set restart actions for the kube-proxy service and no flag. run
// has returned, so its deferred clean-up (the state file's lock
// included) is done; only the log is flushed here. A failure while the
// SCM stops the service is reported: a crash then would restart a service
// it was asked to stop.
func endFailedService(stopping bool, exit func(code int)) {
	if stopping {
		return
	}
	klog.Flush()
	exit(1)
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
