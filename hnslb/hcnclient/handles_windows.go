//go:build windows

package hcnclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"github.com/Microsoft/go-winio/pkg/guid"
	"github.com/Microsoft/hcsshim/hcn"
	"golang.org/x/sys/windows"
)

// hcn's endpoint create, load balancer modify and namespace modify (hcsshim
// hcn/hcnendpoint.go createEndpoint, hcn/hcnloadbalancer.go
// updateLoadBalancer, hcn/hcnnamespace.go modifyNamespace) open the network,
// the load balancer or the namespace, write, read the object back and close,
// but return at the first failure with what they opened still open: each
// endpoint create HNS refuses leaves the network's handle open (and the new
// endpoint's, when the read after it fails), each refused modify the load
// balancer's or the namespace's. hnsproxy runs for months and retries a
// refused write every two minutes at most for as long as HNS refuses it (an
// address HNS holds or reserves, a backend gone), one handle more each time;
// the soak and scale harnesses attach thousands of pods in one process.
// So the client makes these calls itself: the same calls in the same
// order with the same documents, closing what it opened on every path. A
// failure reads as hcn's does ("hcnCreateEndpoint failed in Win32: <message>
// (0x<code>) <HNS's error document>"), its code shortened as hcn's syscall
// wrappers shorten it, so it maps to the same hnslb code.

var (
	computeNetwork                  = windows.NewLazySystemDLL(hcnDLL)
	procOpenNetwork                 = computeNetwork.NewProc("HcnOpenNetwork")
	procCloseNetwork                = computeNetwork.NewProc("HcnCloseNetwork")
	procCreateEndpoint              = computeNetwork.NewProc("HcnCreateEndpoint")
	procQueryEndpointProperties     = computeNetwork.NewProc("HcnQueryEndpointProperties")
	procCloseEndpoint               = computeNetwork.NewProc("HcnCloseEndpoint")
	procOpenLoadBalancer            = computeNetwork.NewProc("HcnOpenLoadBalancer")
	procModifyLoadBalancer          = computeNetwork.NewProc("HcnModifyLoadBalancer")
	procQueryLoadBalancerProperties = computeNetwork.NewProc("HcnQueryLoadBalancerProperties")
	procCloseLoadBalancer           = computeNetwork.NewProc("HcnCloseLoadBalancer")
	procModifyNamespace             = computeNetwork.NewProc("HcnModifyNamespace")
)

// The refusals hcn makes before it calls HNS, in its words (hcn/hcnerrors.go,
// HostComputeEndpoint.Create); refused gives them CodeInvalidParameter.
var (
	errInvalidNetworkID      = errors.New("invalid network ID")
	errInvalidLoadBalancerID = errors.New("invalid load balancer ID")
	errInvalidNamespaceID    = errors.New("invalid namespace ID")
	errNamespaceOnCreate     = errors.New("endpoint create error, endpoint json HostComputeNamespace is read only and should not be set")
)

// createEndpoint is hcn's HostComputeEndpoint.Create, closing the network
// and the endpoint whatever happens.
func createEndpoint(h *hcn.HostComputeEndpoint) (*hcn.HostComputeEndpoint, error) {
	if h.HostComputeNamespace != "" {
		return nil, errNamespaceOnCreate
	}
	networkID, err := guid.FromString(h.HostComputeNetwork)
	if err != nil {
		return nil, errInvalidNetworkID
	}
	settings, err := utf16JSON(h)
	if err != nil {
		return nil, err
	}
	var out hcn.HostComputeEndpoint
	err = withHandle(procCloseNetwork, opener(procOpenNetwork, networkID), func(network syscall.Handle) error {
		return withHandle(procCloseEndpoint, func(endpoint *syscall.Handle) error {
			var id guid.GUID
			var result *uint16
			r0, err := sysCreateEndpoint(network, &id, settings, endpoint, &result)
			return checked(procCreateEndpoint, r0, err, result)
		}, func(endpoint syscall.Handle) error {
			return queryProperties(procQueryEndpointProperties, endpoint, &out)
		})
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// updateLoadBalancer is hcn's HostComputeLoadBalancer.Update, closing the
// load balancer whatever happens.
func updateLoadBalancer(id string, h *hcn.HostComputeLoadBalancer) (*hcn.HostComputeLoadBalancer, error) {
	lbID, err := guid.FromString(id)
	if err != nil {
		return nil, errInvalidLoadBalancerID
	}
	return modify(loadBalancers, procModifyLoadBalancer, lbID, h)
}

// modifyNamespace is hcn's ModifyNamespaceSettings (AddNamespaceEndpoint,
// RemoveNamespaceEndpoint), closing the namespace whatever happens. Like
// hcn it reads the namespace back after the modify and fails if the read
// does.
func modifyNamespace(id string, request *hcn.ModifyNamespaceSettingRequest) error {
	nsID, err := guid.FromString(id)
	if err != nil {
		return errInvalidNamespaceID
	}
	_, err = modify(namespaces, procModifyNamespace, nsID, request)
	return err
}

// modify opens the object id, sends it settings with modifyProc, reads it
// back with hcn's default query and closes it, whatever failed.
func modify[H any](k objectKind[H], modifyProc *windows.LazyProc, id guid.GUID, settings any) (*H, error) {
	doc, err := utf16JSON(settings)
	if err != nil {
		return nil, err
	}
	out := k.blank()
	err = withHandle(k.close, opener(k.open, id), func(h syscall.Handle) error {
		var result *uint16
		r0, err := sysHandle2(modifyProc, h, unsafe.Pointer(doc), unsafe.Pointer(&result))
		if err := checked(modifyProc, r0, err, result); err != nil {
			return err
		}
		return queryProperties(k.query, h, &out)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// namespaceEndpointRequest is hcn's request to add or remove an endpoint.
func namespaceEndpointRequest(requestType hcn.RequestType, endpointID string) (*hcn.ModifyNamespaceSettingRequest, error) {
	settings, err := json.Marshal(map[string]string{"EndpointId": endpointID})
	if err != nil {
		return nil, err
	}
	return &hcn.ModifyNamespaceSettingRequest{ResourceType: hcn.NamespaceResourceTypeEndpoint, RequestType: requestType, Settings: settings}, nil
}

// withHandle opens a handle, uses it and closes it, whether or not the use
// failed. Only a use that succeeded fails on a failed close, as in hcn.
func withHandle(closeProc *windows.LazyProc, open func(*syscall.Handle) error, use func(syscall.Handle) error) error {
	var h syscall.Handle
	if err := open(&h); err != nil {
		closeOpenedAnyway(closeProc, h, err)
		return err
	}
	err := use(h)
	r0, cerr := sysHandle(closeProc, h)
	if cerr = checked(closeProc, r0, cerr, nil); err == nil {
		err = cerr
	}
	return err
}

// closeOpenedAnyway closes the handle an open or create wrote when HNS
// answered success beside an error document: the call fails, as in hcn
// (which leaves that handle open), but HNS opened the object. After a
// failed HRESULT the handle is not HNS's to trust, and is left alone.
func closeOpenedAnyway(closeProc *windows.LazyProc, h syscall.Handle, openErr error) {
	var ce *callError
	if h != 0 && errors.As(openErr, &ce) && ce.byDocument {
		_, _ = sysHandle(closeProc, h) // the open's failure is the answer
	}
}

// queryProperties reads an open object with hcn's default query into out.
func queryProperties(proc *windows.LazyProc, h syscall.Handle, out any) error {
	query, err := hcnQuery(nil)
	if err != nil {
		return err
	}
	return queryWith(proc, h, query, out)
}

// queryWith reads an open object with query into out.
func queryWith(proc *windows.LazyProc, h syscall.Handle, query *uint16, out any) error {
	var props, result *uint16
	r0, err := sysHandle3(proc, h, unsafe.Pointer(query), unsafe.Pointer(&props), unsafe.Pointer(&result))
	doc := takeString(props)
	if err := checked(proc, r0, err, result); err != nil {
		return err
	}
	return json.Unmarshal([]byte(doc), out)
}

// utf16JSON is v's JSON as the UTF-16 string HNS takes.
func utf16JSON(v any) (*uint16, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return windows.UTF16PtrFromString(string(raw))
}

// checked is proc's outcome as hcn's checkForErrors reads it: a failed
// HRESULT, or an error document from HNS, is a failure; the document is
// freed. findErr is the DLL or the export missing.
func checked(proc *windows.LazyProc, r0 uintptr, findErr error, result *uint16) error {
	doc := takeString(result)
	if findErr != nil {
		return findErr
	}
	hr := hresult(r0)
	if hr == nil && doc == "" {
		return nil
	}
	if hr == nil {
		return &callError{fn: proc.Name, code: documentCode(doc), byDocument: true, result: doc}
	}
	return &callError{fn: proc.Name, code: hr, result: doc}
}

// hresult is a failed HRESULT as hcn's syscall wrappers return it, a Win32
// one shortened to its Win32 code, or nil.
func hresult(r0 uintptr) error {
	if int32(r0) >= 0 {
		return nil
	}
	if r0&0x1fff0000 == 0x00070000 {
		r0 &= 0xffff
	}
	return syscall.Errno(r0)
}

// The calls, each with its pointers converted in the syscall's own argument
// list, as unsafe.Pointer's rules for syscalls require.

func sys3(p *windows.LazyProc, a, b, c unsafe.Pointer) (uintptr, error) {
	if err := p.Find(); err != nil {
		return 0, err
	}
	r0, _, _ := syscall.SyscallN(p.Addr(), uintptr(a), uintptr(b), uintptr(c))
	return r0, nil
}

func sysCreateEndpoint(network syscall.Handle, id *guid.GUID, settings *uint16, endpoint *syscall.Handle, result **uint16) (uintptr, error) {
	if err := procCreateEndpoint.Find(); err != nil {
		return 0, err
	}
	r0, _, _ := syscall.SyscallN(procCreateEndpoint.Addr(), uintptr(network), uintptr(unsafe.Pointer(id)),
		uintptr(unsafe.Pointer(settings)), uintptr(unsafe.Pointer(endpoint)), uintptr(unsafe.Pointer(result)))
	return r0, nil
}

func sysHandle(p *windows.LazyProc, h syscall.Handle) (uintptr, error) {
	if err := p.Find(); err != nil {
		return 0, err
	}
	r0, _, _ := syscall.SyscallN(p.Addr(), uintptr(h))
	return r0, nil
}

func sysHandle2(p *windows.LazyProc, h syscall.Handle, a, b unsafe.Pointer) (uintptr, error) {
	if err := p.Find(); err != nil {
		return 0, err
	}
	r0, _, _ := syscall.SyscallN(p.Addr(), uintptr(h), uintptr(a), uintptr(b))
	return r0, nil
}

func sysHandle3(p *windows.LazyProc, h syscall.Handle, a, b, c unsafe.Pointer) (uintptr, error) {
	if err := p.Find(); err != nil {
		return 0, err
	}
	r0, _, _ := syscall.SyscallN(p.Addr(), uintptr(h), uintptr(a), uintptr(b), uintptr(c))
	return r0, nil
}

// callError is a failed call into computenetwork.dll, worded as hcn words
// its HcnError; Unwrap gives the code.
type callError struct {
	fn string // the export, HcnCreateEndpoint
	// code is the failed HRESULT, or where HNS failed the call by its
	// document alone (byDocument), the document's ErrorCode: hcn would give
	// such a failure no code of HNS's (ERROR_GEN_FAILURE), and a port HNS
	// says is taken must still read as taken, a backend gone as gone. A
	// syscall.Errno, nil when the document has none.
	code       error
	byDocument bool
	result     string // HNS's error document
}

func (e *callError) Error() string {
	s := fmt.Sprintf("%s failed in Win32: %v", "hcn"+e.fn[len("Hcn"):], e.code)
	if errno, ok := e.code.(syscall.Errno); ok {
		s += fmt.Sprintf(" (0x%x)", uint32(errno))
	}
	if e.result != "" {
		s += " " + e.result
	}
	return s
}

func (e *callError) Unwrap() error { return e.code }

// documentCode is the ErrorCode of HNS's error document as an HRESULT is
// read (hresult), or nil where it has none. HNS writes it in decimal,
// 2151350291 for 0x803b0013 (kubernetes/community#8883).
func documentCode(doc string) error {
	var d struct{ ErrorCode int64 }
	if json.Unmarshal([]byte(doc), &d) != nil || uint32(d.ErrorCode) == 0 {
		return nil
	}
	code := uint32(d.ErrorCode)
	if hr := hresult(uintptr(code)); hr != nil {
		return hr
	}
	return syscall.Errno(code) // a Win32 code written as itself
}
