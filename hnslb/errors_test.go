package hnslb

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestAddressRefusedCodes: each code HNS may answer for an endpoint address
// it will not take is an address refused; only the two spellings of
// "already exists" are IsAlreadyExists (a network create raced by another
// ADD relies on it), and "invalid or reserved" is neither not-found nor
// unavailable.
func TestAddressRefusedCodes(t *testing.T) {
	for _, c := range []struct {
		code            ErrorCode
		refused, exists bool
	}{
		{CodeAlreadyExists, true, true},
		{CodeObjectAlreadyExists, true, true},
		{CodeAddrInvalidOrReserved, true, false},
		{CodeEndpointAlreadyAttach, true, true},
		{CodePortAlreadyExists, false, false},
		{CodeInvalidIP, false, false},
		{CodeNotFound, false, false},
	} {
		err := NewError("CreateEndpoint", c.code, "")
		if IsAddressRefused(err) != c.refused || IsAlreadyExists(err) != c.exists {
			t.Errorf("0x%x: address refused %v, already exists %v; want %v, %v", uint32(c.code), IsAddressRefused(err), IsAlreadyExists(err), c.refused, c.exists)
		}
		if IsNotFound(err) && c.refused || IsUnavailable(err) {
			t.Errorf("0x%x reads as not found or unavailable", uint32(c.code))
		}
	}
}

// TestMissingReferenceCodes: each code HNS may answer a load balancer write
// naming an object it does not have is a missing reference; only the
// not-found codes are IsNotFound, so a delete answered with another one is
// not taken for done; all but the document's own bad reference say the
// object is gone (IsReferenceGone).
func TestMissingReferenceCodes(t *testing.T) {
	for _, c := range []struct {
		code                    ErrorCode
		missing, gone, notFound bool
	}{
		{CodeEndpointNotFound, true, true, true},
		{CodeNotFound, true, true, true},
		{CodePortNotFound, true, true, false},
		{CodeInvalidJSONReference, true, false, false},
		{CodeInvalidParameter, false, false, false},
		{CodePortAlreadyExists, false, false, false},
	} {
		err := NewError("CreateLoadBalancer", c.code, "")
		if IsMissingReference(err) != c.missing || IsReferenceGone(err) != c.gone || IsNotFound(err) != c.notFound {
			t.Errorf("0x%x: missing reference %v, gone %v, not found %v; want %v, %v, %v", uint32(c.code), IsMissingReference(err), IsReferenceGone(err), IsNotFound(err), c.missing, c.gone, c.notFound)
		}
	}
}

// TestInvalidDocumentCodes: each code HNS gives for a document it will not
// take is an invalid parameter, and nothing else: not a missing object, a
// taken frontend or address, or HNS unavailable.
func TestInvalidDocumentCodes(t *testing.T) {
	for _, code := range InvalidDocumentCodes() {
		err := NewError("CreateLoadBalancer", code, "")
		if !IsInvalidParameter(err) || IsMissingReference(err) || IsPortAlreadyExists(err) || IsAddressRefused(err) || IsTransient(err) {
			t.Errorf("0x%x is not read as an invalid document alone", uint32(code))
		}
	}
	for _, code := range []ErrorCode{CodePortAlreadyExists, CodeNotFound, CodeAddrInvalidOrReserved, CodeRPCServerUnavailable} {
		if IsInvalidParameter(NewError("CreateLoadBalancer", code, "")) {
			t.Errorf("0x%x is read as an invalid document", uint32(code))
		}
	}
}

// TestErrorTextNamesTheCodeOnce: hcn's messages name the code already,
// at their end or before the result HNS sent with it (hcsshim's hcserror:
// "<api> failed in Win32: <text> (0x<code>) <HNS's JSON>", as
// kubernetes/kubernetes#98680 quotes one); an operator reads it once,
// whatever case its hex digits are in.
func TestErrorTextNamesTheCodeOnce(t *testing.T) {
	const invalidDestinations = `hcnCreateLoadBalancer failed in Win32: The parameter is incorrect. (0x57) {"Success":false,` +
		`"Error":"The parameter is incorrect. Unable to initialize VFP LB rule: invalid number of destinations.","ErrorCode":2147942487}`
	for _, c := range []struct {
		code      ErrorCode
		msg, want string
	}{
		{CodeNotFound, "hcnGetLoadBalancer failed in Win32: Element not found. (0x490)", "hns get: hcnGetLoadBalancer failed in Win32: Element not found. (0x490)"},
		{CodePortAlreadyExists, "hcnCreateLoadBalancer failed in Win32: winapi error #2151350291 (0x803B0013)", "hns get: hcnCreateLoadBalancer failed in Win32: winapi error #2151350291 (0x803B0013)"},
		{CodeInvalidParameter, invalidDestinations, "hns get: " + invalidDestinations},
		{CodeNotFound, "Element not found.", "hns get: Element not found. (0x490)"},
		{CodeNotFound, "see (0x490) above", "hns get: see (0x490) above (0x490)"},
	} {
		if got := NewError("get", c.code, "%s", c.msg).Error(); got != c.want {
			t.Errorf("%q: %q, want %q", c.msg, got, c.want)
		}
	}
}

// TestRetryAndUnsupportedCodes: HNS down or restarting (the RPC server
// unavailable, the manager stopped) and a call that timed out are
// unavailable, to retry later; HNS's "request unsupported" is as much an
// operation this build lacks as E_NOTIMPL (a refused modify then reads as
// one this build cannot make); an error that says it is not transient
// is not retried as it is.
func TestRetryAndUnsupportedCodes(t *testing.T) {
	for _, c := range []struct {
		code                        ErrorCode
		unavailable, notImplemented bool
	}{
		{CodeRPCServerUnavailable, true, false},
		{CodeManagerStopped, true, false},
		{CodeTimeout, true, false},
		{CodeNotImplemented, false, true},
		{CodeRequestUnsupported, false, true},
		{CodeInvalidParameter, false, false},
		{CodeNotFound, false, false},
	} {
		err := NewError("UpdateLoadBalancer", c.code, "")
		if IsUnavailable(err) != c.unavailable || IsTransient(err) != c.unavailable || IsNotImplemented(err) != c.notImplemented {
			t.Errorf("0x%x: unavailable %v, transient %v, not implemented %v; want %v, %v, %v", uint32(c.code),
				IsUnavailable(err), IsTransient(err), IsNotImplemented(err), c.unavailable, c.unavailable, c.notImplemented)
		}
	}
	if !IsTransient(transience(true)) || IsTransient(transience(false)) {
		t.Errorf("an error saying it is transient: %v; one saying it is not: %v", IsTransient(transience(true)), IsTransient(transience(false)))
	}
}

// transience is an error that says whether it is transient.
type transience bool

func (transience) Error() string     { return "state file" }
func (t transience) Transient() bool { return bool(t) }

// TestInvalidDocumentCodesAreHCNsTable: the codes the HCN error code table
// gives for a document HNS will not take are each an invalid document,
// among them an invalid IP (0x803b001e, as for a remote endpoint whose
// address is in none of the network's subnets), so what HNS refused is
// reported as rejected rather than retried as it is.
func TestInvalidDocumentCodesAreHCNsTable(t *testing.T) {
	for _, code := range []ErrorCode{CodeInvalidParameter, 0x803b000a, 0x803b000b, CodeInvalidEndpoint, CodeInvalidPolicy, 0x803b000e,
		0x803b000f, 0x803b0016, 0x803b0019, 0x803b001b, CodeInvalidIP, 0x803b002d, 0x803b0030} {
		if !IsInvalidParameter(NewError("CreateLoadBalancer", code, "")) {
			t.Errorf("0x%x is not read as an invalid document", uint32(code))
		}
	}
}

// TestAnHNSErrorUnwrapsToItsCause: errors.Is reaches the error the HNS
// client library returned under an *Error (a call's deadline, say).
func TestAnHNSErrorUnwrapsToItsCause(t *testing.T) {
	err := fmt.Errorf("sync: %w", &Error{Op: "get", Code: CodeTimeout, Err: context.DeadlineExceeded})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v does not unwrap to its cause", err)
	}
}
