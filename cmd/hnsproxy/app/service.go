package app

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"
)

// How the daemon is started and stopped. Under a console, the kubelet or a
// HostProcess container, SIGINT and SIGTERM stop it; under the Windows
// Service Control Manager (--windows-service, service_windows.go) the SCM's
// stop and shutdown requests do. Both go through supervise, so a service
// stop is the same graceful shutdown as a signal.

// controlRequest is what a supervisor is asked.
type controlRequest int

const (
	requestIgnored     controlRequest = iota
	requestInterrogate                // report the current state again (the SCM asks)
	requestStop                       // a signal, or the SCM's stop
	requestShutdown                   // the host is shutting down (the SCM's shutdown)
)

// serviceState is what a supervisor reports of the daemon.
type serviceState int

const (
	stateStartPending serviceState = iota
	stateRunning
	stateStopPending
)

// supervise runs run until it returns. A stop or shutdown request ends
// run's context, and supervise waits for run to return; report hears each
// state change, and the current state again on interrogation. An error
// run returns because it was stopped (context.Canceled) is not an error.
func supervise[R any](run func(context.Context) error, requests <-chan R, decode func(R) controlRequest, report func(serviceState)) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	report(stateStartPending)
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	state := stateRunning
	report(state)
	for {
		select {
		case err := <-done:
			if state == stateStopPending && errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		case r := <-requests:
			switch decode(r) {
			case requestInterrogate:
				report(state)
			case requestStop, requestShutdown:
				if state != stateStopPending {
					state = stateStopPending
					report(state)
					cancel()
				}
			}
		}
	}
}

// runUntilSignalled runs run until it returns or SIGINT or SIGTERM (the
// kubelet's stop) ends it.
func runUntilSignalled(run func(context.Context) error) error {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	return supervise(run, signals, stopOnSignal(os.Exit), func(serviceState) {})
}

// stopOnSignal decodes signals: the first is a stop, and a second one
// while it stops exits at once with code 1, as Kubernetes' own servers do
// (k8s.io/apiserver's SetupSignalHandler). Once the process handles
// SIGINT, Ctrl+C no longer ends it; a second one is the operator's way out
// of a stop that does not end. Nothing is lost by it: the state file is
// written to survive a kill at any point, and HNS keeps every load
// balancer. The SCM never asks twice (a service stopping accepts no
// control), so its supervisor has no such case.
func stopOnSignal(exit func(code int)) func(os.Signal) controlRequest {
	stopping := false
	return func(s os.Signal) controlRequest {
		if stopping {
			klog.InfoS("A second signal while stopping: exiting at once", "signal", s)
			klog.Flush()
			exit(1)
		}
		stopping = true
		return requestStop
	}
}
