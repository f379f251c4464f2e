package sim

import (
	"fmt"
	"slices"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// ErrorVariants choose the codes HNS answers where public sources disagree
// on which one real HNS returns. They combine with every profile; the zero
// value is the simulator's default (0x803b0002 for a missing backend, 0x490
// for a missing load balancer, 0xb7 for an endpoint address another endpoint
// holds, 0x803b0001 for an endpoint create on a network that is gone).
// docs/simulator.md gives the sources.
type ErrorVariants struct {
	// MissingBackend is what a load balancer create or modify naming a
	// backend endpoint that does not exist returns: one of
	// MissingBackendCodes.
	MissingBackend hnslb.ErrorCode
	// MissingLoadBalancer is what a modify, get or delete of a load
	// balancer ID that does not exist returns: one of
	// MissingLoadBalancerCodes.
	MissingLoadBalancer hnslb.ErrorCode
	// AddressTaken is what an endpoint create whose address another
	// endpoint on the network holds returns: one of AddressTakenCodes.
	AddressTaken hnslb.ErrorCode
	// MissingNetwork is what an endpoint create naming a network that does
	// not exist (deleted, or replaced by one of the same name) returns: one
	// of MissingNetworkCodes.
	MissingNetwork hnslb.ErrorCode
	// MissingNetworkListing is what a listing of the endpoints of a
	// network that does not exist answers: 0, an empty list (the default:
	// hcn's filtered query matches nothing), or one of MissingNetworkCodes.
	// No public capture of such a listing was found.
	MissingNetworkListing hnslb.ErrorCode
}

// MissingBackendCodes are the codes seen for "a backend endpoint is gone":
// HCN_E_ENDPOINT_NOT_FOUND, ERROR_NOT_FOUND, HCN_E_PORT_NOT_FOUND, and
// HCN_E_INVALID_JSON_REFERENCE, which HNS answered a load balancer create
// naming a backend it did not take (kubernetes/kubernetes#100384). The
// first is the default.
func MissingBackendCodes() []hnslb.ErrorCode {
	return []hnslb.ErrorCode{hnslb.CodeEndpointNotFound, hnslb.CodeNotFound, hnslb.CodePortNotFound, hnslb.CodeInvalidJSONReference}
}

// MissingLoadBalancerCodes are the codes modelled for "no such load
// balancer": ERROR_NOT_FOUND (the default) and HCN_E_ENDPOINT_NOT_FOUND.
func MissingLoadBalancerCodes() []hnslb.ErrorCode {
	return []hnslb.ErrorCode{hnslb.CodeNotFound, hnslb.CodeEndpointNotFound}
}

// AddressTakenCodes are the codes modelled for "another endpoint holds
// this address": ERROR_ALREADY_EXISTS (the default), ERROR_OBJECT_ALREADY_EXISTS
// (kubernetes/kubernetes#74766) and HCN_E_ADDR_INVALID_OR_RESERVED
// (kubernetes/kubernetes#100962, kubernetes-sigs/sig-windows-tools#71).
func AddressTakenCodes() []hnslb.ErrorCode {
	return []hnslb.ErrorCode{hnslb.CodeAlreadyExists, hnslb.CodeObjectAlreadyExists, hnslb.CodeAddrInvalidOrReserved}
}

// MissingNetworkCodes are the codes modelled for an endpoint create on a
// network that is gone: HCN_E_NETWORK_NOT_FOUND (the default), which hcn
// itself answers a read of a network that does not exist, and
// ERROR_NOT_FOUND, what unknown IDs answer. No public capture of such a
// create was found.
func MissingNetworkCodes() []hnslb.ErrorCode {
	return []hnslb.ErrorCode{hnslb.CodeNetworkNotFound, hnslb.CodeNotFound}
}

// Check reports a code outside the modelled ones.
func (v ErrorVariants) Check() error {
	if v.MissingBackend != 0 && !slices.Contains(MissingBackendCodes(), v.MissingBackend) {
		return fmt.Errorf("missing-backend code 0x%x: want one of %s", uint32(v.MissingBackend), codeList(MissingBackendCodes()))
	}
	if v.MissingLoadBalancer != 0 && !slices.Contains(MissingLoadBalancerCodes(), v.MissingLoadBalancer) {
		return fmt.Errorf("missing-load-balancer code 0x%x: want one of %s", uint32(v.MissingLoadBalancer), codeList(MissingLoadBalancerCodes()))
	}
	if v.AddressTaken != 0 && !slices.Contains(AddressTakenCodes(), v.AddressTaken) {
		return fmt.Errorf("address-taken code 0x%x: want one of %s", uint32(v.AddressTaken), codeList(AddressTakenCodes()))
	}
	if v.MissingNetwork != 0 && !slices.Contains(MissingNetworkCodes(), v.MissingNetwork) {
		return fmt.Errorf("missing-network code 0x%x: want one of %s", uint32(v.MissingNetwork), codeList(MissingNetworkCodes()))
	}
	if v.MissingNetworkListing != 0 && !slices.Contains(MissingNetworkCodes(), v.MissingNetworkListing) {
		return fmt.Errorf("missing-network listing code 0x%x: want 0 (an empty list) or one of %s", uint32(v.MissingNetworkListing), codeList(MissingNetworkCodes()))
	}
	return nil
}

// withDefaults fills the zero fields with the default codes.
func (v ErrorVariants) withDefaults() ErrorVariants {
	if v.MissingBackend == 0 {
		v.MissingBackend = MissingBackendCodes()[0]
	}
	if v.MissingLoadBalancer == 0 {
		v.MissingLoadBalancer = MissingLoadBalancerCodes()[0]
	}
	if v.AddressTaken == 0 {
		v.AddressTaken = AddressTakenCodes()[0]
	}
	if v.MissingNetwork == 0 {
		v.MissingNetwork = MissingNetworkCodes()[0]
	}
	return v
}

// notFound is the code for a missing object of kind looked up by ID.
func (h *HNS) notFound(kind string) hnslb.ErrorCode {
	if kind == kindLoadBalancer {
		return h.variants.MissingLoadBalancer
	}
	return hnslb.CodeNotFound
}

const kindLoadBalancer = "load balancer"

func codeList(codes []hnslb.ErrorCode) string {
	s := ""
	for i, c := range codes {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("0x%x", uint32(c))
	}
	return s
}
