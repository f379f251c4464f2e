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

func TestSCMHandlerFailure(t *testing.T) {
	status := make(chan svc.Status, 8)
	failure := errors.New("HNS network did not appear")
	h := &scmHandler{run: func(context.Context) error { return failure }}
	specific, code := h.Execute(nil, make(chan svc.ChangeRequest), status)
	if !specific || code != 1 || !errors.Is(h.err, failure) {
		t.Errorf("Execute = %v %d, err %v; want service-specific exit code 1 and the daemon's error", specific, code, h.err)
	}
}
