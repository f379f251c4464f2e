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

// A failure of the daemon that no stop asked for ends the process with 1
// before it reports a stop, a crash to the SCM (endFailedService).
func TestSCMHandlerFailure(t *testing.T) {
	failure := errors.New("HNS network did not appear")
	var exits []int
	h := &scmHandler{
		run:  func(context.Context) error { return failure },
		exit: func(code int) { exits = append(exits, code) },
	}
	specific, code := h.Execute([]string{"kube-proxy", "--windows-service"}, make(chan svc.ChangeRequest), make(chan svc.Status, 8))
	if !slices.Equal(exits, []int{1}) {
		t.Errorf("exits %v, want the process to exit with 1 before it reports a stop", exits)
	}
	// What Execute returns reaches the SCM only where exit returned.
	if !specific || code != 1 || !errors.Is(h.err, failure) {
		t.Errorf("Execute = %v %d, err %v; want service-specific exit code 1 and the daemon's error", specific, code, h.err)
	}
}

// A daemon that fails while the SCM stops it is reported, never ended as a
// crash: the SCM would restart a service it was asked to stop.
func TestSCMHandlerFailureWhileStopping(t *testing.T) {
	for _, stop := range []svc.Cmd{svc.Stop, svc.Shutdown} {
		requests := make(chan svc.ChangeRequest)
		running := make(chan struct{})
		var exits []int
		h := &scmHandler{
			run: func(ctx context.Context) error {
				close(running)
				<-ctx.Done()
				return errors.New("the last state file write failed")
			},
			exit: func(code int) { exits = append(exits, code) },
		}
		done := make(chan uint32, 1)
		go func() {
			_, code := h.Execute([]string{"kube-proxy"}, requests, make(chan svc.Status, 8))
			done <- code
		}()
		<-running
		requests <- svc.ChangeRequest{Cmd: stop}
		if code := <-done; code != 1 || len(exits) != 0 {
			t.Errorf("control %d: exit code %d, exits %v; want the failure reported with 1 and no exit", stop, code, exits)
		}
	}
}

// A service whose daemon failed by itself must end in a way its SCM
// restarts. The SCM restarts a process that ends without reporting itself
// stopped, a crash, whatever the service's failure-actions flag. A stop
// reported with an exit code it restarts only where that flag is in
// effect, and a change of the flag takes effect from the next boot
// (SERVICE_FAILURE_ACTIONS_FLAG, Microsoft's winsvc.h reference): a
// service installed with sc.exe failureflag and started at once would read
// the flag set and yet stay stopped after its first failure, such as the
// exit hnsproxy makes on purpose when its config file changes. kube-up's
// GCE Windows nodes install kube-proxy with `sc.exe failure kube-proxy
// reset= 0 actions= restart/10000` and no flag at all (kubernetes
// cluster/gce/windows/k8s-node-setup.psm1, v1.36.3), counting on
// kube-proxy's process ending as a crash (pkg/windows/service's handler
// never reports a stop; the command's error exits). So every failure that
// no stop asked for ends as a crash; one while the SCM stops the service is
// reported, or the SCM would restart a service it was asked to stop.
func TestFailedServiceEndsAsItsSCMRestartsIt(t *testing.T) {
	cases := []struct {
		name      string
		stopping  bool
		wantCrash bool
	}{
		{"a failure by itself (failureflag set or not, in effect or not)", false, true},
		{"a failure while the SCM stops it", true, false},
	}
	for _, c := range cases {
		var exits []int
		endFailedService(c.stopping, func(code int) { exits = append(exits, code) })
		switch {
		case c.wantCrash && !slices.Equal(exits, []int{1}):
			t.Errorf("%s: exits %v, want the process to exit with 1 before it reports a stop (a crash to the SCM)", c.name, exits)
		case !c.wantCrash && len(exits) != 0:
			t.Errorf("%s: exits %v, want the failure reported to the SCM", c.name, exits)
		}
	}
}
