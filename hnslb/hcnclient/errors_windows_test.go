//go:build windows

package hcnclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/Microsoft/hcsshim/hcn"
	"golang.org/x/sys/windows"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// asHNSError requires err to be *hnslb.Error with code want that still wraps
// the original error.
func asHNSError(t *testing.T, err error, want hnslb.ErrorCode) *hnslb.Error {
	t.Helper()
	var e *hnslb.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not *hnslb.Error", err, err)
	}
	if e.Code != want {
		t.Errorf("code of %q = %#x, want %#x", err, uint32(e.Code), uint32(want))
	}
	if e.Err == nil {
		t.Errorf("error %q does not wrap hcn's error", err)
	}
	return e
}

// Errors built the way hcn's callers see them, without calling HNS.
func TestMapErrorOfConstructedErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want hnslb.ErrorCode
	}{
		{"network lookup miss", hcn.NetworkNotFoundError{NetworkName: "cbr0"}, hnslb.CodeNetworkNotFound},
		{"endpoint lookup miss", fmt.Errorf("get: %w", hcn.EndpointNotFoundError{EndpointID: "x"}), hnslb.CodeEndpointNotFound},
		{"load balancer lookup miss", hcn.LoadBalancerNotFoundError{LoadBalancerId: "x"}, hnslb.CodeNotFound},
		{"namespace lookup miss", hcn.NamespaceNotFoundError{NamespaceID: "x"}, hnslb.CodeNotFound},
		{"HNS code as Errno", fmt.Errorf("create: %w", syscall.Errno(0x803b0013)), hnslb.CodePortAlreadyExists},
		{"short Win32 code", syscall.Errno(0x57), hnslb.CodeInvalidParameter},
		{"Win32 HRESULT spelled long", syscall.Errno(0x80070490), hnslb.CodeNotFound},
		{"object already exists as HRESULT", syscall.Errno(0x80071392), hnslb.CodeObjectAlreadyExists},
		{"reference invalid in the document", fmt.Errorf("hcnCreateLoadBalancer failed in Win32: %w", syscall.Errno(0x803b001c)), hnslb.CodeInvalidJSONReference},
		{"address invalid or reserved", fmt.Errorf("hcnCreateEndpoint failed in Win32: %w", syscall.Errno(0x803b002f)), hnslb.CodeAddrInvalidOrReserved},
		{"RPC server unavailable", syscall.Errno(0x6ba), hnslb.CodeRPCServerUnavailable},
		{"RPC server unavailable as HRESULT", syscall.Errno(0x800706ba), hnslb.CodeRPCServerUnavailable},
		{"RPC call failed", syscall.Errno(0x6be), hnslb.CodeRPCServerUnavailable},
		{"HNS not running (RPC interface unknown)", syscall.Errno(0x6b5), hnslb.CodeRPCServerUnavailable},
		{"HNS not running as HRESULT", syscall.Errno(0x800706b5), hnslb.CodeRPCServerUnavailable},
		{"HNS service not started", syscall.Errno(0x426), hnslb.CodeRPCServerUnavailable},
		// Every code unreachableCodes takes: which one a stopped or busy HNS
		// answers is not known, and each read as anything else (a code the
		// reconciler does not retry as HNS down) would fail its object.
		{"RPC server too busy", syscall.Errno(0x6bb), hnslb.CodeRPCServerUnavailable},
		{"RPC call failed, not executed", syscall.Errno(0x6bf), hnslb.CodeRPCServerUnavailable},
		{"RPC endpoint mapper has no HNS endpoint", syscall.Errno(0x6d9), hnslb.CodeRPCServerUnavailable},
		{"RPC endpoint mapper has no HNS endpoint as HRESULT", syscall.Errno(0x800706d9), hnslb.CodeRPCServerUnavailable},
		{"missing DLL", &windows.DLLError{Err: syscall.Errno(126), ObjName: "computenetwork.dll", Msg: "no dll"}, hnslb.CodeNotImplemented},
		{"unknown HNS code kept", syscall.Errno(0x803b00ff), hnslb.ErrorCode(0x803b00ff)},
		{"no code at all", errors.New("HNS failed with error : boom"), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := mapError("Op", c.err)
			e := asHNSError(t, err, c.want)
			if !errors.Is(err, c.err) {
				t.Errorf("mapped error does not wrap %v", c.err)
			}
			if !strings.Contains(e.Error(), c.err.Error()) {
				t.Errorf("message %q lost %q", e.Error(), c.err.Error())
			}
			if hnslb.IsUnavailable(err) && hnslb.IsNotFound(err) {
				t.Errorf("%v is both unavailable and not-found", err)
			}
		})
	}
	if mapError("Op", nil) != nil {
		t.Error("mapError(nil) != nil")
	}
}

func TestCallTurnsPanicIntoError(t *testing.T) {
	err := call(context.Background(), "ListLoadBalancers", func() error { panic("interface conversion") })
	e := asHNSError(t, err, 0)
	if !strings.Contains(e.Message, "interface conversion") || e.Op != "ListLoadBalancers" {
		t.Errorf("panic became %+v", e)
	}
}

func TestCallHonoursCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	err := call(ctx, "CreateLoadBalancer", func() error { called = true; return nil })
	if called || !errors.Is(err, context.Canceled) {
		t.Errorf("call with a cancelled context: called=%v err=%v", called, err)
	}
}

func TestRequireSystemDLLNamesTheMissingDLL(t *testing.T) {
	err := requireSystemDLL("hnsproxy-no-such-dll.dll")
	if err == nil || !strings.Contains(err.Error(), "hnsproxy-no-such-dll.dll") {
		t.Errorf("requireSystemDLL of a missing DLL = %v", err)
	}
	if err := requireSystemDLL("kernel32.dll"); err != nil {
		t.Errorf("requireSystemDLL(kernel32.dll) = %v", err)
	}
}
