//go:build windows

package hcnclient

import (
	"errors"
	"reflect"
	"syscall"

	"github.com/Microsoft/hcsshim/hcn"
	"golang.org/x/sys/windows"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Win32 codes that mean the HNS service could not be reached (stopped,
// restarting, overloaded). They are "retry later", never "not found"
// (kubernetes/kubernetes#139519). Which one a stopped or starting HNS
// answers is not known, so each is taken (docs/simulator.md, "HNS down").
var unreachableCodes = map[hnslb.ErrorCode]bool{
	0x426: true, // ERROR_SERVICE_NOT_ACTIVE
	// RPC_S_UNKNOWN_IF: HNS's RPC interface is not registered, the service
	// not running or not yet initialized; kube-proxy 1.37's winkernel
	// (pkg/proxy/winkernel/hns.go) reads it as "HNS is not running".
	0x6b5: true,
	0x6ba: true, // RPC_S_SERVER_UNAVAILABLE
	0x6bb: true, // RPC_S_SERVER_TOO_BUSY
	0x6be: true, // RPC_S_CALL_FAILED
	0x6bf: true, // RPC_S_CALL_FAILED_DNE
	0x6d9: true, // EPT_S_NOT_REGISTERED
}

// mapError turns an hcn failure into *hnslb.Error carrying HNS's code. An
// error without a recognisable code keeps code 0 and wraps the original, so
// its message and chain survive.
func mapError(op string, err error) error {
	if err == nil {
		return nil
	}
	out := &hnslb.Error{Op: op, Code: codeOf(err), Message: err.Error(), Err: err}
	if unreachableCodes[out.Code] {
		out.Code = hnslb.CodeRPCServerUnavailable
	}
	return out
}

// codeOf finds HNS's code in an hcn error, or 0.
func codeOf(err error) hnslb.ErrorCode {
	// hcn's own "looked it up, got nothing" errors (Get*ByID/ByName).
	switch {
	case errors.As(err, new(hcn.NetworkNotFoundError)):
		return hnslb.CodeNetworkNotFound
	case errors.As(err, new(hcn.EndpointNotFoundError)):
		return hnslb.CodeEndpointNotFound
	case errors.As(err, new(hcn.NamespaceNotFoundError)),
		errors.As(err, new(hcn.LoadBalancerNotFoundError)),
		errors.As(err, new(hcn.RouteNotFoundError)):
		return hnslb.CodeNotFound
	// The codes hcn itself classifies.
	case hcn.IsElementNotFoundError(err):
		return hnslb.CodeNotFound
	case hcn.IsPortAlreadyExistsError(err):
		return hnslb.CodePortAlreadyExists
	case hcn.IsNotImplemented(err):
		return hnslb.CodeNotImplemented
	// A DLL or export this Windows lacks.
	case errors.As(err, new(*windows.DLLError)):
		return hnslb.CodeNotImplemented
	}
	if errno, ok := errnoOf(err); ok {
		return normalize(uint32(errno))
	}
	return 0
}

// normalize turns a Win32 HRESULT (0x8007xxxx) into its short Win32 code,
// the way hcn's syscall wrappers do, so both spellings compare equal.
func normalize(code uint32) hnslb.ErrorCode {
	if code&0xffff0000 == 0x80070000 {
		code &= 0xffff
	}
	return hnslb.ErrorCode(code)
}

// errnoOf finds the HRESULT or Win32 code hcn got from the system. hcn wraps
// it in hcserror.HcsError (an internal type whose Err field holds the
// syscall.Errno) which has no Unwrap method, alone from hnsCall or embedded
// in *hcn.HcnError; so besides Unwrap this follows exported Err fields.
func errnoOf(err error) (syscall.Errno, bool) {
	return findErrno(err, 0)
}

func findErrno(err error, depth int) (syscall.Errno, bool) {
	if err == nil || depth > 16 {
		return 0, false
	}
	if errno, ok := err.(syscall.Errno); ok {
		return errno, true
	}
	var next []error
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		next = append(next, u.Unwrap())
	case interface{ Unwrap() []error }:
		next = append(next, u.Unwrap()...)
	}
	next = append(next, innerErr(err))
	for _, e := range next {
		if errno, ok := findErrno(e, depth+1); ok {
			return errno, true
		}
	}
	return 0, false
}

// innerErr returns the exported `Err error` field of err's struct (promoted
// fields included), or nil.
func innerErr(err error) error {
	v := reflect.ValueOf(err)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	f, ok := v.Type().FieldByName("Err")
	if !ok || !f.IsExported() || f.Type != reflect.TypeFor[error]() {
		return nil
	}
	fv, err2 := v.FieldByIndexErr(f.Index)
	if err2 != nil || fv.IsNil() {
		return nil
	}
	return fv.Interface().(error)
}
