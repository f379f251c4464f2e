//go:build windows

package hcnclient

import (
	"context"
	"fmt"
	"strconv"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// hnsServiceName is the Host Network Service's name in the service control
// manager.
const hnsServiceName = "hns"

// ServiceInstance is the hns service's process ID, from the service control
// manager (query rights only, as the least a HostProcess pod needs). A
// restart of the service starts a new process where the service runs in a
// process of its own, as services do on hosts with 3.5 GB of memory or more
// (svchost's split threshold); where it shares one, the ID does not change
// and a restart is not seen this way. A service that is not running has no
// instance: the error is unavailable, as HNS's calls are then.
func (c *Client) ServiceInstance(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return serviceProcess(hnsServiceName)
}

// serviceProcess is the process ID of the running service name.
func serviceProcess(serviceName string) (string, error) {
	scm, err := windows.OpenSCManager(nil, nil, windows.SC_MANAGER_CONNECT)
	if err != nil {
		return "", fmt.Errorf("opening the service control manager: %w", err)
	}
	defer windows.CloseServiceHandle(scm)
	name, err := windows.UTF16PtrFromString(serviceName)
	if err != nil {
		return "", err
	}
	svc, err := windows.OpenService(scm, name, windows.SERVICE_QUERY_STATUS)
	if err != nil {
		return "", fmt.Errorf("opening service %s: %w", serviceName, err)
	}
	defer windows.CloseServiceHandle(svc)
	var st windows.SERVICE_STATUS_PROCESS
	var needed uint32
	if err := windows.QueryServiceStatusEx(svc, windows.SC_STATUS_PROCESS_INFO,
		(*byte)(unsafe.Pointer(&st)), uint32(unsafe.Sizeof(st)), &needed); err != nil {
		return "", fmt.Errorf("querying service %s: %w", serviceName, err)
	}
	return instanceOf(serviceName, &st)
}

// instanceOf is the instance a service's status gives: its process ID
// while it runs, else none.
func instanceOf(serviceName string, st *windows.SERVICE_STATUS_PROCESS) (string, error) {
	if st.CurrentState != windows.SERVICE_RUNNING || st.ProcessId == 0 {
		return "", &hnslb.Error{Op: "ServiceInstance", Code: hnslb.CodeRPCServerUnavailable,
			Message: fmt.Sprintf("service %s is not running (state %d)", serviceName, st.CurrentState)}
	}
	return strconv.FormatUint(uint64(st.ProcessId), 10), nil
}
