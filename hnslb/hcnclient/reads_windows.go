//go:build windows

package hcnclient

import (
	"encoding/json"
	"syscall"
	"unsafe"

	"github.com/Microsoft/go-winio/pkg/guid"
	"github.com/Microsoft/hcsshim/hcn"
	"golang.org/x/sys/windows"
)

// hcn's reads leak as its writes do (handles_windows.go): getLoadBalancer,
// getEndpoint, getNetwork and getNamespace (hcsshim hcn/hcn*.go), which
// every get and every listing runs once per object, open the object, query
// it and close it, but return at a failed query with the handle still open,
// and createLoadBalancer returns at a failed read after the create with the
// new load balancer's handle open. hnsproxy reads for as long as it runs:
// the probe's two gets every 30 s, a drift repair's listings (again after
// each failure), the network by name at each repair, the creates a Sync
// retries. So the client makes these calls itself too, the same calls in
// the same order with the same queries, closing what it opened on every
// path. A get that finds nothing answers hcn's not-found error for the kind.

var (
	procCreateLoadBalancer       = computeNetwork.NewProc("HcnCreateLoadBalancer")
	procOpenEndpoint             = computeNetwork.NewProc("HcnOpenEndpoint")
	procQueryNetworkProperties   = computeNetwork.NewProc("HcnQueryNetworkProperties")
	procOpenNamespace            = computeNetwork.NewProc("HcnOpenNamespace")
	procQueryNamespaceProperties = computeNetwork.NewProc("HcnQueryNamespaceProperties")
	procCloseNamespace           = computeNetwork.NewProc("HcnCloseNamespace")
)

// objectKind is the DLL calls that enumerate, open, query and close one
// kind of object; blank is what a read decodes into.
type objectKind[H any] struct {
	enumerate, open, query, close *windows.LazyProc
	blank                         func() H
}

var (
	loadBalancers = objectKind[hcn.HostComputeLoadBalancer]{procEnumerateLoadBalancers, procOpenLoadBalancer,
		procQueryLoadBalancerProperties, procCloseLoadBalancer, func() hcn.HostComputeLoadBalancer { return hcn.HostComputeLoadBalancer{} }}
	endpoints = objectKind[hcn.HostComputeEndpoint]{procEnumerateEndpoints, procOpenEndpoint,
		procQueryEndpointProperties, procCloseEndpoint, func() hcn.HostComputeEndpoint { return hcn.HostComputeEndpoint{} }}
	// A network HNS answers without a type is NAT: HNS leaves NAT's 0 out
	// of the document, and hcn's getNetwork presets it so.
	networks = objectKind[hcn.HostComputeNetwork]{procEnumerateNetworks, procOpenNetwork,
		procQueryNetworkProperties, procCloseNetwork, func() hcn.HostComputeNetwork { return hcn.HostComputeNetwork{Type: hcn.NAT} }}
	namespaces = objectKind[hcn.HostComputeNamespace]{procEnumerateNamespaces, procOpenNamespace,
		procQueryNamespaceProperties, procCloseNamespace, func() hcn.HostComputeNamespace { return hcn.HostComputeNamespace{} }}
)

// readAll is hcn's enumerate*: the IDs filter (nil: none) matches, then
// each object read with the same query. An object whose read answers "not
// found" was deleted after the enumeration and is left out
// (listing_windows.go); any other failed read fails it.
func readAll[H any](k objectKind[H], filter map[string]string) ([]H, error) {
	query, err := hcnQuery(filter)
	if err != nil {
		return nil, err
	}
	ids, err := enumerateWith(k.enumerate, query)
	if err != nil {
		return nil, err
	}
	var out []H
	for _, id := range ids {
		g, err := guid.FromString(id)
		if err != nil {
			return nil, err
		}
		h, err := read(k, g, query)
		switch {
		case err == nil:
			out = append(out, *h)
		case !isGone(err):
			return nil, err
		}
	}
	return out, nil
}

// readOne is hcn's Get*By*: the listing filtered on key = value, its first
// object, or notFound.
func readOne[H any](k objectKind[H], key, value string, notFound error) (*H, error) {
	hs, err := readAll(k, map[string]string{key: value})
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, notFound
	}
	return &hs[0], nil
}

// read opens the object id, queries it with query and closes it, whether
// or not the query failed.
func read[H any](k objectKind[H], id guid.GUID, query *uint16) (*H, error) {
	out := k.blank()
	err := withHandle(k.close, opener(k.open, id), func(h syscall.Handle) error {
		return queryWith(k.query, h, query, &out)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// opener opens the object id with open, as withHandle takes it.
func opener(open *windows.LazyProc, id guid.GUID) func(*syscall.Handle) error {
	return func(h *syscall.Handle) error {
		var result *uint16
		r0, err := sys3(open, unsafe.Pointer(&id), unsafe.Pointer(h), unsafe.Pointer(&result))
		return checked(open, r0, err, result)
	}
}

// createLoadBalancer is hcn's HostComputeLoadBalancer.Create, closing the
// new load balancer whether or not the read after the create failed.
func createLoadBalancer(h *hcn.HostComputeLoadBalancer) (*hcn.HostComputeLoadBalancer, error) {
	settings, err := utf16JSON(h)
	if err != nil {
		return nil, err
	}
	var out hcn.HostComputeLoadBalancer
	err = withHandle(procCloseLoadBalancer, func(lb *syscall.Handle) error {
		var id guid.GUID
		var result *uint16
		r0, err := sys4(procCreateLoadBalancer, unsafe.Pointer(&id), unsafe.Pointer(settings), unsafe.Pointer(lb), unsafe.Pointer(&result))
		return checked(procCreateLoadBalancer, r0, err, result)
	}, func(lb syscall.Handle) error {
		return queryProperties(procQueryLoadBalancerProperties, lb, &out)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// hcnQuery is hcn's default query, with filter (nil: none) as its Filter,
// as the UTF-16 string HNS takes.
func hcnQuery(filter map[string]string) (*uint16, error) {
	q := hcn.HostComputeQuery{SchemaVersion: hcn.SchemaVersion{Major: 2, Minor: 0}, Flags: hcn.HostComputeQueryFlagsNone}
	if filter != nil {
		f, err := json.Marshal(filter)
		if err != nil {
			return nil, err
		}
		q.Filter = string(f)
	}
	return utf16JSON(q)
}

func sys4(p *windows.LazyProc, a, b, c, d unsafe.Pointer) (uintptr, error) {
	if err := p.Find(); err != nil {
		return 0, err
	}
	r0, _, _ := syscall.SyscallN(p.Addr(), uintptr(a), uintptr(b), uintptr(c), uintptr(d))
	return r0, nil
}

// The gets, as hcn's Get*By* (a listing filtered on the ID or the name).

func getLoadBalancerByID(id string) (*hcn.HostComputeLoadBalancer, error) {
	return readOne(loadBalancers, "ID", id, hcn.LoadBalancerNotFoundError{LoadBalancerId: id})
}

func getEndpointByID(id string) (*hcn.HostComputeEndpoint, error) {
	return readOne(endpoints, "ID", id, hcn.EndpointNotFoundError{EndpointID: id})
}

func getEndpointByName(name string) (*hcn.HostComputeEndpoint, error) {
	return readOne(endpoints, "Name", name, hcn.EndpointNotFoundError{EndpointName: name})
}

func getNetworkByID(id string) (*hcn.HostComputeNetwork, error) {
	return readOne(networks, "ID", id, hcn.NetworkNotFoundError{NetworkID: id})
}

func getNetworkByName(name string) (*hcn.HostComputeNetwork, error) {
	return readOne(networks, "Name", name, hcn.NetworkNotFoundError{NetworkName: name})
}

func getNamespaceByID(id string) (*hcn.HostComputeNamespace, error) {
	return readOne(namespaces, "ID", id, hcn.NamespaceNotFoundError{NamespaceID: id})
}
