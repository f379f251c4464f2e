package hnslb

import (
	"errors"
	"fmt"
	"strings"
)

// ErrorCode is the HRESULT or Win32 code HNS returns. Generic Windows codes
// arrive short (0x490), HNS's own as 0x803bxxxx.
type ErrorCode uint32

const (
	CodeInvalidParameter      ErrorCode = 0x57       // ERROR_INVALID_PARAMETER; also "invalid number of destinations"
	CodeAlreadyExists         ErrorCode = 0xb7       // ERROR_ALREADY_EXISTS
	CodeNotFound              ErrorCode = 0x490      // ERROR_NOT_FOUND
	CodeObjectAlreadyExists   ErrorCode = 0x1392     // ERROR_OBJECT_ALREADY_EXISTS ("The object already exists.")
	CodeTimeout               ErrorCode = 0x5b4      // ERROR_TIMEOUT
	CodeRPCServerUnavailable  ErrorCode = 0x6ba      // RPC_S_SERVER_UNAVAILABLE: the HNS service is down or restarting
	CodeNotImplemented        ErrorCode = 0x80004001 // E_NOTIMPL
	CodeNetworkNotFound       ErrorCode = 0x803b0001 // HCN_E_NETWORK_NOT_FOUND
	CodeEndpointNotFound      ErrorCode = 0x803b0002 // HCN_E_ENDPOINT_NOT_FOUND
	CodePortNotFound          ErrorCode = 0x803b0007 // HCN_E_PORT_NOT_FOUND ("The switch-port was not found.")
	CodeInvalidEndpoint       ErrorCode = 0x803b000c // HCN_E_INVALID_ENDPOINT
	CodeInvalidPolicy         ErrorCode = 0x803b000d // HCN_E_INVALID_POLICY
	CodeNetworkAlreadyExists  ErrorCode = 0x803b0010 // HCN_E_NETWORK_ALREADY_EXISTS
	CodePortAlreadyExists     ErrorCode = 0x803b0013 // HCN_E_PORT_ALREADY_EXISTS
	CodeEndpointAlreadyAttach ErrorCode = 0x803b0014 // HCN_E_ENDPOINT_ALREADY_ATTACHED
	CodeRequestUnsupported    ErrorCode = 0x803b0015 // HCN_E_REQUEST_UNSUPPORTED
	CodeInvalidJSONReference  ErrorCode = 0x803b001c // HCN_E_INVALID_JSON_REFERENCE ("The reference is invalid in the JSON document.")
	CodeInvalidIP             ErrorCode = 0x803b001e // HCN_E_INVALID_IP
	CodeManagerStopped        ErrorCode = 0x803b0020 // HCN_E_MANAGER_STOPPED
	CodeAddrInvalidOrReserved ErrorCode = 0x803b002f // HCN_E_ADDR_INVALID_OR_RESERVED
)

// Error is an HNS failure: the operation, HNS's code, and HNS's message.
type Error struct {
	Op      string
	Code    ErrorCode
	Message string
	// Err is the underlying error from the HNS client library, if any.
	Err error
}

// Unwrap returns the underlying error, so errors.Is/As reach it.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("hns %s: code 0x%x", e.Op, uint32(e.Code))
	}
	code := fmt.Sprintf("(0x%x)", uint32(e.Code))
	if lower := strings.ToLower(e.Message); strings.HasSuffix(lower, code) || strings.Contains(lower, code+" {") {
		// hcn's messages name the code already, at their end ("... failed
		// in Win32: Element not found. (0x490)") or before the JSON result
		// HNS sent with it ("... (0x57) {"Success":false,...}").
		return fmt.Sprintf("hns %s: %s", e.Op, e.Message)
	}
	return fmt.Sprintf("hns %s: %s %s", e.Op, e.Message, code)
}

// NewError builds an *Error.
func NewError(op string, code ErrorCode, format string, args ...any) *Error {
	return &Error{Op: op, Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the HNS code inside err, and whether there was one.
func CodeOf(err error) (ErrorCode, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, true
	}
	return 0, false
}

func hasCode(err error, codes ...ErrorCode) bool {
	c, ok := CodeOf(err)
	if !ok {
		return false
	}
	for _, want := range codes {
		if c == want {
			return true
		}
	}
	return false
}

// IsNotFound reports an object that does not exist. HNS being unreachable is
// never "not found" (kubernetes/kubernetes#139519).
func IsNotFound(err error) bool {
	return hasCode(err, CodeNotFound, CodeNetworkNotFound, CodeEndpointNotFound)
}

// IsMissingReference reports a write that named an object HNS does not
// have: a not-found code, 0x803b0007 (the switch port of an endpoint),
// which HNS has answered to load balancer creates (microsoft/hcsshim#1043),
// or 0x803b001c (a reference in the document HNS does not take,
// kubernetes/kubernetes#100384).
// Which code real HNS gives for a missing backend or a missing load
// balancer is not known, so the caller must find out which one is missing
// (reconciler: a Get of the load balancer). It is kept apart from
// IsNotFound: a delete answered 0x803b0007 must not count as done.
func IsMissingReference(err error) bool {
	return IsReferenceGone(err) || hasCode(err, CodeInvalidJSONReference)
}

// IsReferenceGone is the part of IsMissingReference that says an object the
// write named is gone (a not-found code, or 0x803b0007): once the caller has
// found and made it again, the retry passes. 0x803b001c, a reference HNS
// does not take in the document, need not.
func IsReferenceGone(err error) bool {
	return IsNotFound(err) || hasCode(err, CodePortNotFound)
}

// IsPortAlreadyExists reports a frontend conflict with another load balancer.
func IsPortAlreadyExists(err error) bool { return hasCode(err, CodePortAlreadyExists) }

// IsAlreadyExists reports a duplicate object (an endpoint IP taken, a network name taken).
// Windows spells it ERROR_ALREADY_EXISTS or ERROR_OBJECT_ALREADY_EXISTS
// (kubernetes/kubernetes#74766, an endpoint create).
func IsAlreadyExists(err error) bool {
	return hasCode(err, CodeAlreadyExists, CodeObjectAlreadyExists, CodeNetworkAlreadyExists, CodeEndpointAlreadyAttach)
}

// IsAddressRefused reports an endpoint create HNS refused for its address:
// taken by another endpoint, or "invalid or reserved" (0x803b002f, which
// HNS has answered an overlay source VIP's create: kubernetes/kubernetes#100962).
// Which of these codes HNS gives for an address another endpoint holds is
// not known, so each means "look at what holds it".
func IsAddressRefused(err error) bool {
	return IsAlreadyExists(err) || hasCode(err, CodeAddrInvalidOrReserved)
}

// IsInvalidParameter reports a document HNS refused as invalid, after
// which it surely made nothing: ERROR_INVALID_PARAMETER (too many
// destinations, say) or one of HCN's invalid-document codes.
func IsInvalidParameter(err error) bool { return hasCode(err, InvalidDocumentCodes()...) }

// InvalidDocumentCodes are ERROR_INVALID_PARAMETER and the codes the HCN
// error code table (MicrosoftDocs/Virtualization-Documentation, "HCN Error
// Code") gives for a document HNS will not take: an invalid network,
// network type, endpoint, policy, policy type, remote endpoint operation,
// port mapping, GUID, JSON, IP, internal port or prefix. Which of them HNS
// answers for which fault of a document is not published.
func InvalidDocumentCodes() []ErrorCode {
	return []ErrorCode{CodeInvalidParameter, 0x803b000a, 0x803b000b, CodeInvalidEndpoint, CodeInvalidPolicy, 0x803b000e,
		0x803b000f, 0x803b0016, 0x803b0019, 0x803b001b, CodeInvalidIP, 0x803b002d, 0x803b0030}
}

// IsNotImplemented reports an operation this HNS build lacks.
func IsNotImplemented(err error) bool {
	return hasCode(err, CodeNotImplemented, CodeRequestUnsupported)
}

// IsUnavailable reports that HNS could not be reached or is restarting: retry later.
func IsUnavailable(err error) bool {
	return hasCode(err, CodeRPCServerUnavailable, CodeManagerStopped, CodeTimeout)
}

// IsTransient reports an error worth retrying as it is: HNS unavailable,
// or an error that says so itself with a Transient method (a state file
// held open by another process).
func IsTransient(err error) bool {
	var t interface{ Transient() bool }
	return IsUnavailable(err) || errors.As(err, &t) && t.Transient()
}
