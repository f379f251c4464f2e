//go:build windows

package app

import (
	"context"
	"errors"
	"slices"
	"testing"

	"golang.org/x/sys/windows/svc"
)

// The SCM's side of Execute, played with channels: what it reports and the
// exit code it returns, for a stop or a host shutdown and for a failure of
// the daemon.
func TestSCMHandlerStop(t *testing.T) {
	for _, stop := range []svc.Cmd{svc.Stop, svc.Shutdown} {
		testSCMHandlerStop(t, stop)
	}
}

func testSCMHandlerStop(t *testing.T, stop svc.Cmd) {
	requests := make(chan svc.ChangeRequest)
	status := make(chan svc.Status, 8)
	running := make(chan struct{})
	h := &scmHandler{run: func(ctx context.Context) error {
		close(running)
		<-ctx.Done()
		return ctx.Err()
	}}
	type exit struct {
		specific bool
		code     uint32
	}
	done := make(chan exit, 1)
	go func() {
		specific, code := h.Execute(nil, requests, status)
		done <- exit{specific, code}
	}()
	<-running
	requests <- svc.ChangeRequest{Cmd: svc.Interrogate}
	requests <- svc.ChangeRequest{Cmd: stop}
	if e := <-done; e.specific || e.code != 0 || h.err != nil {
		t.Errorf("Execute after control %d = %+v, err %v; want a clean exit", stop, e, h.err)
	}
	close(status)
	var states []svc.State
	for s := range status {
		states = append(states, s.State)
		if s.State == svc.Running && s.Accepts != svc.AcceptStop|svc.AcceptShutdown {
			t.Errorf("running accepts %v, want stop and shutdown", s.Accepts)
		}
	}
	if want := []svc.State{svc.StartPending, svc.Running, svc.Running, svc.StopPending}; !slices.Equal(states, want) {
		t.Errorf("control %d: reported %v, want %v", stop, states, want)
	}
}

// A failure of the daemon is reported with service-specific exit code 1
// where the service's failure-actions flag is set, read for the name the
// SCM runs it under; without the flag the process exits with 1 before it
// reports a stop, as kube-proxy's does (endFailedService).
func TestSCMHandlerFailure(t *testing.T) {
	failure := errors.New("HNS network did not appear")
	for _, flag := range []bool{true, false} {
		var asked []string
		var exits []int
		h := &scmHandler{
			run: func(context.Context) error { return failure },
			nonCrashRecovery: func(name string) (bool, error) {
				asked = append(asked, name)
				return flag, nil
			},
			exit: func(code int) { exits = append(exits, code) },
		}
		specific, code := h.Execute([]string{"kube-proxy", "--windows-service"}, make(chan svc.ChangeRequest), make(chan svc.Status, 8))
		if !specific || code != 1 || !errors.Is(h.err, failure) {
			t.Errorf("flag %v: Execute = %v %d, err %v; want service-specific exit code 1 and the daemon's error", flag, specific, code, h.err)
		}
		if !slices.Equal(asked, []string{"kube-proxy"}) {
			t.Errorf("flag %v: read the flag of %q, want the service's own name", flag, asked)
		}
		if wantExits := map[bool][]int{true: nil, false: {1}}[flag]; !slices.Equal(exits, wantExits) {
			t.Errorf("flag %v: exits %v, want %v", flag, exits, wantExits)
		}
	}
}

// A daemon that fails while the SCM stops it is reported, never ended as a
// crash: the SCM would restart a service it was asked to stop.
func TestSCMHandlerFailureWhileStopping(t *testing.T) {
	requests := make(chan svc.ChangeRequest)
	running := make(chan struct{})
	var exits []int
	h := &scmHandler{
		run: func(ctx context.Context) error {
			close(running)
			<-ctx.Done()
			return errors.New("the last state file write failed")
		},
		nonCrashRecovery: func(string) (bool, error) { return false, nil },
		exit:             func(code int) { exits = append(exits, code) },
	}
	done := make(chan uint32, 1)
	go func() {
		_, code := h.Execute([]string{"kube-proxy"}, requests, make(chan svc.Status, 8))
		done <- code
	}()
	<-running
	requests <- svc.ChangeRequest{Cmd: svc.Stop}
	if code := <-done; code != 1 || len(exits) != 0 {
		t.Errorf("exit code %d, exits %v; want the failure reported with 1 and no exit", code, exits)
	}
}

// A service whose daemon failed by itself must end in a way its SCM
// restarts. kube-up's GCE Windows nodes install kube-proxy with
// `sc.exe failure kube-proxy reset= 0 actions= restart/10000` and no
// `sc.exe failureflag` (kubernetes cluster/gce/windows/k8s-node-setup.psm1,
// v1.36.3): the SCM restarts it because kube-proxy's process ends without
// reporting itself stopped (pkg/windows/service's handler never reports
// it; the command's error exits), which the SCM takes for a crash. A
// failure reported as a stop with an exit code is restarted only where
// the failure-actions flag is set. So hnsproxy reports the failure where
// the flag is set, and otherwise, or where the flag cannot be read, ends
// as kube-proxy does; a failure while the SCM stops the service is always
// reported, or the SCM would restart a service it was asked to stop.
func TestFailedServiceEndsAsItsSCMRestartsIt(t *testing.T) {
	unreadable := errors.New("Access is denied.")
	cases := []struct {
		name      string
		stopping  bool
		flag      bool
		flagErr   error
		wantCrash bool
	}{
		{"failureflag set (hnsproxy's documented install)", false, true, nil, false},
		{"no failureflag (GCE's kube-proxy service)", false, false, nil, true},
		{"failureflag unreadable", false, false, unreadable, true},
		{"failure while the SCM stops it, no failureflag", true, false, nil, false},
	}
	for _, c := range cases {
		var exits []int
		endFailedService(c.stopping, func() (bool, error) { return c.flag, c.flagErr },
			func(code int) { exits = append(exits, code) })
		switch {
		case c.wantCrash && !slices.Equal(exits, []int{1}):
			t.Errorf("%s: exits %v, want the process to exit with 1 before it reports a stop (a crash to the SCM)", c.name, exits)
		case !c.wantCrash && len(exits) != 0:
			t.Errorf("%s: exits %v, want the failure reported to the SCM", c.name, exits)
		}
	}
}
