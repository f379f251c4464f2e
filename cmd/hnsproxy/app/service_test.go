package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// recorder collects the states a supervisor reports.
type recorder struct{ states []serviceState }

func (r *recorder) report(s serviceState) { r.states = append(r.states, s) }

func same(r controlRequest) controlRequest { return r }

// A stop ends run's context; supervise reports stop pending, waits for run
// and returns without error, the context's cancellation being the stop.
func TestSuperviseStopIsGracefulShutdown(t *testing.T) {
	for _, stop := range []controlRequest{requestStop, requestShutdown} {
		requests := make(chan controlRequest)
		running, stopping, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
		var rec recorder
		var cleanedUp bool
		done := make(chan error, 1)
		go func() {
			done <- supervise(func(ctx context.Context) error {
				close(running)
				<-ctx.Done()
				close(stopping)
				<-release // still shutting down: supervise keeps answering
				cleanedUp = true
				return ctx.Err()
			}, requests, same, rec.report)
		}()
		<-running
		requests <- requestIgnored
		requests <- requestInterrogate
		requests <- stop
		<-stopping
		requests <- requestStop // a second stop while stopping changes nothing
		close(release)
		if err := <-done; err != nil {
			t.Errorf("request %d: supervise = %v, want nil after a stop", stop, err)
		}
		if !cleanedUp {
			t.Errorf("request %d: supervise returned before run did", stop)
		}
		want := []serviceState{stateStartPending, stateRunning, stateRunning, stateStopPending}
		if !slices.Equal(rec.states, want) {
			t.Errorf("request %d: reported %v, want %v (start pending, running, running again on interrogation, stop pending)", stop, rec.states, want)
		}
	}
}

// run failing on its own is supervise's error, so the SCM sees a failure.
func TestSuperviseReturnsRunsFailure(t *testing.T) {
	failure := errors.New("content of the configuration file was updated")
	var rec recorder
	err := supervise(func(context.Context) error { return failure }, make(chan controlRequest), same, rec.report)
	if !errors.Is(err, failure) {
		t.Errorf("supervise = %v, want %v", err, failure)
	}
	if want := []serviceState{stateStartPending, stateRunning}; !slices.Equal(rec.states, want) {
		t.Errorf("reported %v, want %v", rec.states, want)
	}
	// Cancelled without a stop request is a failure too.
	err = supervise(func(context.Context) error { return context.Canceled }, make(chan controlRequest), same, rec.report)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("supervise = %v, want context.Canceled passed on when nobody asked to stop", err)
	}
}

// The first signal stops the daemon gracefully; a second one while it
// still stops exits at once, with code 1 (a console's second Ctrl+C).
func TestSecondSignalExitsAtOnce(t *testing.T) {
	exited := make(chan int, 2)
	signals := make(chan os.Signal)
	stopping, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- supervise(func(ctx context.Context) error {
			<-ctx.Done()
			close(stopping)
			<-release // a stop that does not end
			return ctx.Err()
		}, signals, stopOnSignal(func(code int) { exited <- code }), func(serviceState) {})
	}()
	signals <- os.Interrupt
	<-stopping
	select {
	case code := <-exited:
		t.Fatalf("the first signal exited with %d, want a graceful stop", code)
	default:
	}
	signals <- syscall.SIGTERM // taken, so decoded before supervise returns
	close(release)
	if err := <-done; err != nil {
		t.Errorf("supervise = %v", err)
	}
	select {
	case code := <-exited:
		if code != 1 {
			t.Errorf("the second signal exited with %d, want 1", code)
		}
	default:
		t.Error("the second signal while stopping did not exit")
	}
}

// --windows-service reaches the Service Control Manager before the
// configuration is read, as kube-proxy's does (server.go's RunE: initForOS,
// then Complete): a configuration that fails (here a --config file that is
// not there) is a failure of the running service, which the SCM restarts
// (endFailedService), not a process that ended before it ever reported to
// the SCM.
func TestWindowsServiceStartsBeforeItsConfiguration(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing-config.yaml")
	defer func(saved func(func(context.Context) error) error) { runAsService = saved }(runAsService)
	var rec recorder
	var underService error
	reached := false
	runAsService = func(run func(context.Context) error) error {
		reached = true
		underService = supervise(run, make(chan controlRequest), same, rec.report)
		return underService
	}
	_, err := execute(t, "--windows-service", "--config="+missing)
	if !reached {
		t.Fatalf("the command ended before it reached the Service Control Manager: %v", err)
	}
	if underService == nil || !strings.Contains(underService.Error(), "missing-config.yaml") || !errors.Is(err, underService) {
		t.Errorf("the service's failure = %v, the command's %v; want both the error of the missing config file", underService, err)
	}
	if want := []serviceState{stateStartPending, stateRunning}; !slices.Equal(rec.states, want) {
		t.Errorf("reported %v, want %v", rec.states, want)
	}
}

// Where --windows-service's start before the configuration ends: a value
// the configuration refuses (--proxy-mode=ipvs) is a failure of the
// running service, but a command line that does not parse (an unknown
// flag, an argument, a value of the wrong type) ends the process before it
// reaches the Service Control Manager, as it ends kube-proxy's: cobra
// parses the flags before the command runs (docs/operators.md, "Running as
// a Windows service").
func TestWindowsServiceCommandLineErrorsEndBeforeTheSCM(t *testing.T) {
	defer func(saved func(func(context.Context) error) error) { runAsService = saved }(runAsService)
	cases := []struct {
		arg, want string
		reaches   bool
	}{
		{"--proxy-mode=ipvs", `implements only "kernelspace"`, true},
		{"--no-such-flag", "unknown flag", false},
		{"extra", "does not take any arguments", false},
		{"--sync-period=30", "missing unit in duration", false},
		{"--enable-dsr=maybe", `invalid argument "maybe"`, false},
	}
	for _, c := range cases {
		reached := false
		runAsService = func(run func(context.Context) error) error {
			reached = true
			return supervise(run, make(chan controlRequest), same, func(serviceState) {})
		}
		_, err := execute(t, "--windows-service", "--network-name=cbr0", c.arg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.arg, err, c.want)
		}
		if reached != c.reaches {
			t.Errorf("%s: reached the Service Control Manager %v, want %v", c.arg, reached, c.reaches)
		}
	}
}
