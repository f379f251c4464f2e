//go:build windows

package hcnclient

import (
	"encoding/json"
	"fmt"
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
// "not found"; on a busy node a long listing might never get through. The
// client makes the same calls itself (reads_windows.go) and leaves out an
// object whose read answers "not found", in the one pass: no second
// enumeration, no filtered get per ID. "Not found" from the enumeration
// itself stays the listing's answer.

var (
	procEnumerateLoadBalancers = computeNetwork.NewProc("HcnEnumerateLoadBalancers")
	procEnumerateEndpoints     = computeNetwork.NewProc("HcnEnumerateEndpoints")
	procEnumerateNamespaces    = computeNetwork.NewProc("HcnEnumerateNamespaces")
	procEnumerateNetworks      = computeNetwork.NewProc("HcnEnumerateNetworks")
)

// listNetworks is hcn.ListNetworks (reads_windows.go), leaving out a
// network gone before it was read; so are the listings below.
func listNetworks() ([]hcn.HostComputeNetwork, error) { return readAll(networks, nil) }

func listNamespaces() ([]hcn.HostComputeNamespace, error) { return readAll(namespaces, nil) }

func listLoadBalancers() ([]hcn.HostComputeLoadBalancer, error) { return readAll(loadBalancers, nil) }

func listEndpoints() ([]hcn.HostComputeEndpoint, error) { return readAll(endpoints, nil) }

// listEndpointsOfNetwork is hcn.ListEndpointsOfNetwork: the listing with
// hcn's filter on the network.
func listEndpointsOfNetwork(networkID string) ([]hcn.HostComputeEndpoint, error) {
	return readAll(endpoints, map[string]string{"VirtualNetwork": networkID})
}

// isGone reports an hcn error that says an object is not found.
func isGone(err error) bool { return hnslb.IsNotFound(mapError("", err)) }

// enumerateWith calls an HcnEnumerate* function with query and returns the
// IDs it answers. As in hcn, an error document fails it even beside a
// successful HRESULT, and a failure reads as the client's other calls do.
func enumerateWith(proc *windows.LazyProc, query *uint16) ([]string, error) {
	var idsBuf, result *uint16
	r0, err := sys3(proc, unsafe.Pointer(query), unsafe.Pointer(&idsBuf), unsafe.Pointer(&result))
	ids := takeString(idsBuf)
	if err := checked(proc, r0, err, result); err != nil {
		return nil, err
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
