//go:build windows

package hcnclient

import (
	"encoding/json"
	"fmt"
	"syscall"
	"unsafe"

	"github.com/Microsoft/hcsshim/hcn"
	"golang.org/x/sys/windows"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// hcn lists every kind of object in two steps: it enumerates the IDs a
// query matches, then opens, queries and closes each object, and one failed
// open fails the whole listing (hcsshim hcn/hcnloadbalancer.go
// enumerateLoadBalancers, hcn/hcnendpoint.go enumerateEndpoints,
// hcn/hcnnamespace.go enumerateNamespaces). An object deleted between the
// two steps, as the CNI deletes a pod's endpoint, the container runtime a
// pod's namespace, or a Sync a load balancer while Repair lists, fails it
// "not found"; on a busy node a long listing might never get through. So
// when hcn's listing fails "not found", the client lists again itself: it
// enumerates the IDs, reads each by ID with hcn, and leaves out those gone
// by then. "Not found" from the enumeration itself stays the listing's
// answer. The second listing costs an enumeration more per object (hcn's
// Get*ByID is a filtered listing), and only after a failed one.

var (
	procEnumerateLoadBalancers = computeNetwork.NewProc("HcnEnumerateLoadBalancers")
	procEnumerateEndpoints     = computeNetwork.NewProc("HcnEnumerateEndpoints")
	procEnumerateNamespaces    = computeNetwork.NewProc("HcnEnumerateNamespaces")
	procEnumerateNetworks      = computeNetwork.NewProc("HcnEnumerateNetworks")
)

// listNetworks is hcn.ListNetworks (reads_windows.go), listed again by ID
// after "not found"; so are the listings below.
func listNetworks() ([]hcn.HostComputeNetwork, error) {
	return orByID(func() ([]hcn.HostComputeNetwork, error) { return readAll(networks, nil) }, procEnumerateNetworks, nil, getNetworkByID)
}

// listNamespaces is hcn.ListNamespaces, listed again by ID after "not found".
func listNamespaces() ([]hcn.HostComputeNamespace, error) {
	return orByID(func() ([]hcn.HostComputeNamespace, error) { return readAll(namespaces, nil) }, procEnumerateNamespaces, nil, getNamespaceByID)
}

// listLoadBalancers is hcn.ListLoadBalancers, listed again by ID after "not found".
func listLoadBalancers() ([]hcn.HostComputeLoadBalancer, error) {
	return orByID(func() ([]hcn.HostComputeLoadBalancer, error) { return readAll(loadBalancers, nil) }, procEnumerateLoadBalancers, nil, getLoadBalancerByID)
}

// listEndpoints is hcn.ListEndpoints, listed again by ID after "not found".
func listEndpoints() ([]hcn.HostComputeEndpoint, error) {
	return orByID(func() ([]hcn.HostComputeEndpoint, error) { return readAll(endpoints, nil) }, procEnumerateEndpoints, nil, getEndpointByID)
}

// listEndpointsOfNetwork is hcn.ListEndpointsOfNetwork, listed again by ID
// after "not found", with hcn's filter on the network.
func listEndpointsOfNetwork(networkID string) ([]hcn.HostComputeEndpoint, error) {
	filter := map[string]string{"VirtualNetwork": networkID}
	return orByID(func() ([]hcn.HostComputeEndpoint, error) { return readAll(endpoints, filter) },
		procEnumerateEndpoints, filter, getEndpointByID)
}

// orByID runs list; when it fails "not found", it enumerates the IDs
// matching filter with enumerate and reads each with get, leaving out those
// get finds gone.
func orByID[H any](list func() ([]H, error), enumerate *windows.LazyProc, filter map[string]string, get func(string) (*H, error)) ([]H, error) {
	hs, err := list()
	if err == nil || !isGone(err) {
		return hs, err
	}
	ids, err := enumerateIDs(enumerate, filter)
	if err != nil {
		return nil, err
	}
	hs = make([]H, 0, len(ids))
	for _, id := range ids {
		h, err := get(id)
		switch {
		case err == nil:
			hs = append(hs, *h)
		case !isGone(err):
			return nil, err
		}
	}
	return hs, nil
}

// isGone reports an hcn error that says an object is not found.
func isGone(err error) bool { return hnslb.IsNotFound(mapError("", err)) }

// enumerateIDs calls an HcnEnumerate* function with hcn's default query
// (filter, if any, as hcn's Filter) and returns the IDs it answers.
func enumerateIDs(proc *windows.LazyProc, filter map[string]string) ([]string, error) {
	query, err := hcnQuery(filter)
	if err != nil {
		return nil, err
	}
	return enumerateWith(proc, query)
}

// enumerateWith calls an HcnEnumerate* function with query and returns the
// IDs it answers.
func enumerateWith(proc *windows.LazyProc, queryPtr *uint16) ([]string, error) {
	if err := proc.Find(); err != nil {
		return nil, err
	}
	var idsBuf, resultBuf *uint16
	r0, _, _ := syscall.SyscallN(proc.Addr(), uintptr(unsafe.Pointer(queryPtr)),
		uintptr(unsafe.Pointer(&idsBuf)), uintptr(unsafe.Pointer(&resultBuf)))
	ids, result := takeString(idsBuf), takeString(resultBuf)
	if int32(r0) < 0 {
		return nil, fmt.Errorf("%s failed: %w %s", proc.Name, syscall.Errno(r0), result)
	}
	var out []string
	if err := json.Unmarshal([]byte(ids), &out); err != nil {
		return nil, fmt.Errorf("%s answered %q: %w", proc.Name, ids, err)
	}
	return out, nil
}

// takeString returns the string HNS allocated at p and frees it.
func takeString(p *uint16) string {
	if p == nil {
		return ""
	}
	defer windows.CoTaskMemFree(unsafe.Pointer(p))
	return windows.UTF16PtrToString(p)
}
