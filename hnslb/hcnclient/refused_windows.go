//go:build windows

package hcnclient

import (
	"errors"

	"github.com/Microsoft/go-winio/pkg/guid"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// hcn refuses some calls before it calls HNS, with errors of its own that
// carry no code: an ID that is not a GUID where it parses one (deletes,
// modifies, the network of an endpoint create: errInvalidLoadBalancerID and
// friends, hcsshim hcn/hcnerrors.go), and an endpoint create whose document
// names a namespace (HostComputeEndpoint.Create, hcn/hcnendpoint.go). The
// client answers those as HNS answers a document it will not take,
// CodeInvalidParameter, as the simulator does, so callers know that nothing
// was made.

// refused gives err, a failure without a code, CodeInvalidParameter when
// hcn refused the call before calling HNS.
func refused(err error, byHcn bool) error {
	var e *hnslb.Error
	if byHcn && errors.As(err, &e) && e.Code == 0 {
		e.Code = hnslb.CodeInvalidParameter
	}
	return err
}

// badID reports an ID hcn does not parse (guid.FromString, as hcn).
func badID(id string) bool {
	_, err := guid.FromString(id)
	return err != nil
}

// badEndpointCreate reports an endpoint create hcn refuses itself.
func badEndpointCreate(networkID string, e *hnslb.Endpoint) bool {
	return badID(networkID) || e != nil && e.HostComputeNamespace != ""
}
