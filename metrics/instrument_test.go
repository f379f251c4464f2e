package metrics

import (
	"context"
	"testing"

	"k8s.io/component-base/metrics/testutil"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// scriptedHNS answers load balancer calls with a fixed error; embedding the
// interface makes any other call panic, so the test notices unexpected calls.
type scriptedHNS struct {
	hnslb.Client
	err   error
	calls int
}

func (s *scriptedHNS) CreateLoadBalancer(_ context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	s.calls++
	if s.err != nil {
		return nil, s.err
	}
	out := *lb
	out.ID = "lb-1"
	return &out, nil
}

func (s *scriptedHNS) DeleteLoadBalancer(context.Context, string) error {
	s.calls++
	return s.err
}

func counter(t *testing.T, op, result string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(HNSOperationsTotal.WithLabelValues(op, result))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func durations(t *testing.T, op string) uint64 {
	t.Helper()
	n, err := testutil.GetHistogramMetricCount(HNSOperationDuration.WithLabelValues(op))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestInstrumentClientCountsByResult(t *testing.T) {
	Register()
	cases := []struct {
		err    error
		result string
	}{
		{nil, ResultSuccess},
		{hnslb.NewError("create", hnslb.CodePortAlreadyExists, "The specified port already exists."), ResultPortConflict},
		{hnslb.NewError("create", hnslb.CodeInvalidParameter, "invalid number of destinations"), ResultInvalid},
		{hnslb.NewError("create", hnslb.CodeRPCServerUnavailable, "HNS is restarting"), ResultUnavailable},
		{hnslb.NewError("create", hnslb.CodeNotImplemented, ""), ResultNotImplemented},
		{hnslb.NewError("create", 0x80004005, "unspecified"), ResultError},
	}
	for _, c := range cases {
		fake := &scriptedHNS{err: c.err}
		client := InstrumentClient(fake)
		before, beforeN := counter(t, "create_load_balancer", c.result), durations(t, "create_load_balancer")
		lb, err := client.CreateLoadBalancer(context.Background(), &hnslb.LoadBalancer{FrontendVIPs: []string{"10.96.0.10"}})
		if err != c.err {
			t.Errorf("%s: the wrapper changed the error: %v", c.result, err)
		}
		if (err == nil) != (lb != nil && lb.ID == "lb-1") {
			t.Errorf("%s: the wrapper changed the result: %+v", c.result, lb)
		}
		if fake.calls != 1 {
			t.Errorf("%s: %d calls reached HNS", c.result, fake.calls)
		}
		if got := counter(t, "create_load_balancer", c.result) - before; got != 1 {
			t.Errorf("%s: counter moved by %v", c.result, got)
		}
		if got := durations(t, "create_load_balancer") - beforeN; got != 1 {
			t.Errorf("%s: %d duration observations", c.result, got)
		}
	}
	before := counter(t, "delete_load_balancer", ResultNotFound)
	err := InstrumentClient(&scriptedHNS{err: hnslb.NewError("delete", hnslb.CodeNotFound, "")}).DeleteLoadBalancer(context.Background(), "gone")
	if !hnslb.IsNotFound(err) || counter(t, "delete_load_balancer", ResultNotFound)-before != 1 {
		t.Errorf("delete of a vanished load balancer: err %v, not_found counter not moved", err)
	}
}
