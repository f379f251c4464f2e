package metrics

import (
	"context"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Result label values of HNSOperationsTotal.
const (
	ResultSuccess        = "success"
	ResultNotFound       = "not_found"
	ResultAlreadyExists  = "already_exists"
	ResultPortConflict   = "port_conflict"
	ResultInvalid        = "invalid_parameter"
	ResultNotImplemented = "not_implemented"
	ResultUnavailable    = "unavailable"
	ResultError          = "error"
)

// resultOf classifies an HNS error for the result label.
func resultOf(err error) string {
	switch {
	case err == nil:
		return ResultSuccess
	case hnslb.IsNotFound(err):
		return ResultNotFound
	case hnslb.IsPortAlreadyExists(err):
		return ResultPortConflict
	case hnslb.IsAlreadyExists(err):
		return ResultAlreadyExists
	case hnslb.IsInvalidParameter(err):
		return ResultInvalid
	case hnslb.IsNotImplemented(err):
		return ResultNotImplemented
	case hnslb.IsUnavailable(err):
		return ResultUnavailable
	default:
		return ResultError
	}
}

// InstrumentClient returns c with every call counted in HNSOperationsTotal
// and timed in HNSOperationDuration. The operation label is the method name
// in snake case (create_load_balancer, list_endpoints, ...), as
// hnslb.Around names them.
func InstrumentClient(c hnslb.Client) hnslb.Client {
	return instrumented{Client: hnslb.Around(c, timeCall), c: c}
}

// instrumented is c with its calls timed (the embedded Client), and the
// walks and ServiceInstance, which hnslb.Around does not handle as this
// wrapper must, written out (instrument_walk.go).
type instrumented struct {
	hnslb.Client
	c hnslb.Client
}

// observe records one call that started at start.
func observe(op string, start time.Time, err error) {
	HNSOperationDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
	HNSOperationsTotal.WithLabelValues(op, resultOf(err)).Inc()
}

// timeCall makes one call, timed and counted under op.
func timeCall(op string, call func() error) error {
	start := time.Now()
	err := call()
	observe(op, start, err)
	return err
}

// ServiceInstance is not an HNS call (the service control manager on
// Windows): not timed as one.
func (i instrumented) ServiceInstance(ctx context.Context) (string, error) {
	return i.c.ServiceInstance(ctx)
}
