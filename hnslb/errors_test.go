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
