//go:build windows

package hcnclient

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

// TestServiceProcessReadsTheServiceControlManager: the query that tells an
// HNS restart, run against a service Wine (and Windows) runs, gives its
// process ID; a service that does not exist is an error naming it, not an
// instance. Under Wine there is no hns service, so ServiceInstance itself
// must answer with an error.
func TestServiceProcessReadsTheServiceControlManager(t *testing.T) {
	inst, err := serviceProcess("RpcSs")
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
