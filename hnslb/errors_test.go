package hnslb

import "testing"

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
