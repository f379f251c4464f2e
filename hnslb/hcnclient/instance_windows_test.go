//go:build windows

package hcnclient

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestServiceProcessReadsTheServiceControlManager: the query that tells an
// HNS restart, run against a service Wine (and Windows) runs, gives its
// process ID; a service that does not exist is an error naming it, not an
// instance. Under Wine there is no hns service, so ServiceInstance itself
// must answer with an error.
func TestServiceProcessReadsTheServiceControlManager(t *testing.T) {
	inst, err := runningServiceProcess("RpcSs")
	if err != nil {
		t.Fatalf("RpcSs: %v", err)
	}
	if pid, err := strconv.ParseUint(inst, 10, 32); err != nil || pid == 0 {
		t.Errorf("RpcSs's instance %q is not a process ID", inst)
	}
	if _, err := serviceProcess("no-such-service-hnsproxy"); err == nil || !strings.Contains(err.Error(), "no-such-service-hnsproxy") {
		t.Errorf("a missing service: %v; want an error naming it", err)
	}
	if inst, err := (&Client{}).ServiceInstance(context.Background()); err == nil && inst == "" {
		t.Error("ServiceInstance: no instance and no error")
	}
}

// runningServiceProcess waits for a service the system runs: in a Wine
// prefix booted just before the tests, RpcSs may still be starting, or (on
// a loaded machine) stopped and not yet started on demand, which
// serviceProcess rightly answers as "not running"; and the service control
// manager itself may not answer yet (RPC_S_SERVER_UNAVAILABLE from
// OpenSCManager, seen in a CI run beside a long fuzz run). A stopped one is
// started once, as a client of it would have it started.
func runningServiceProcess(name string) (string, error) {
	var inst string
	var err error
	started := false
	for range 60 {
		if !started && stopped(name) {
			started = startService(name) == nil
		}
		inst, err = serviceProcess(name)
		var he *hnslb.Error
		notRunning := errors.As(err, &he) && he.Code == hnslb.CodeRPCServerUnavailable
		if err == nil || !notRunning && !errors.Is(err, windows.RPC_S_SERVER_UNAVAILABLE) {
			return inst, err
		}
		time.Sleep(500 * time.Millisecond)
	}
	return inst, err
}

// stopped tells whether the service is known to the SCM and stopped.
func stopped(name string) bool {
	m, err := mgr.Connect()
	if err != nil {
		return false
	}
	defer m.Disconnect()
	s, err := m.OpenService(name)
	if err != nil {
		return false
	}
	defer s.Close()
	st, err := s.Query()
	return err == nil && st.State == svc.Stopped
}

// startService asks the SCM to start the service; one already running is
// not an error.
func startService(name string) error {
	m, err := mgr.Connect()
	if err != nil {
		return err
	}
	defer m.Disconnect()
	s, err := m.OpenService(name)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Start(); err != nil && !errors.Is(err, windows.ERROR_SERVICE_ALREADY_RUNNING) {
		return err
	}
	return nil
}

// TestOnlyARunningServiceHasAnInstance: a service starting or stopping (HNS
// restarting) may already or still have a process, but no instance yet: it
// answers unavailable, as HNS's calls do then, so an instance is only ever
// a running HNS's.
func TestOnlyARunningServiceHasAnInstance(t *testing.T) {
	for _, c := range []struct {
		state uint32
		pid   uint32
		want  string // "": unavailable
	}{
		{windows.SERVICE_RUNNING, 4242, "4242"},
		{windows.SERVICE_RUNNING, 0, ""},
		{windows.SERVICE_START_PENDING, 4242, ""},
		{windows.SERVICE_STOP_PENDING, 4242, ""},
		{windows.SERVICE_STOPPED, 0, ""},
	} {
		inst, err := instanceOf("hns", &windows.SERVICE_STATUS_PROCESS{CurrentState: c.state, ProcessId: c.pid})
		if c.want != "" && (err != nil || inst != c.want) || c.want == "" && (inst != "" || !hnslb.IsUnavailable(err)) {
			t.Errorf("state %d, process %d: instance %q, %v; want %q", c.state, c.pid, inst, err, c.want)
		}
	}
}
