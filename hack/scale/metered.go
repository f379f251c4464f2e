package main

import (
	"context"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// meteredHNS wraps the simulator and adds up the CPU its calls spend on the
// calling thread, so that the simulator's own work (validation scans, deep
// copies) can be taken out of the proxier's CPU figure. The simulated
// latency is a timer sleep inside the call: no thread CPU, but the Go
// runtime's hand-offs around a parked goroutine run on other threads and
// are charged to the proxier (see docs/benchmarks.md).
type meteredHNS struct {
	inner hnslb.Client
	cpu   atomic.Int64 // nanoseconds
	calls atomic.Int64
	// probe is what one meter costs outside the interval it measures (the
	// thread pinning, the clock reads' halves outside it): without the
	// simulator's calls, the proxier's figure would not have it.
	probe time.Duration
}

var _ hnslb.Client = (*meteredHNS)(nil)

func newMeteredHNS(inner hnslb.Client) *meteredHNS {
	m := &meteredHNS{inner: inner}
	m.probe = m.calibrate()
	return m
}

// CPU is the thread CPU spent inside simulator calls so far.
func (m *meteredHNS) CPU() time.Duration { return time.Duration(m.cpu.Load()) }

// ProbeCPU is the CPU the metering itself cost the proxier's figure so far.
func (m *meteredHNS) ProbeCPU() time.Duration { return time.Duration(m.calls.Load()) * m.probe }

// meter runs fn pinned to one OS thread and charges its thread CPU to the simulator.
func (m *meteredHNS) meter(fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	m.calls.Add(1)
	start := threadCPU()
	fn()
	m.cpu.Add(int64(threadCPU() - start))
}

// calibrate measures the meter's cost outside its interval, the median of
// a few rounds of empty meters: the thread CPU of the round less what the
// meters charged to their calls, per meter.
func (m *meteredHNS) calibrate() time.Duration {
	const rounds, perRound = 7, 2000
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	costs := make([]time.Duration, rounds)
	for i := range costs {
		cpu0, in0 := threadCPU(), m.cpu.Load()
		for range perRound {
			m.meter(func() {})
		}
		costs[i] = (threadCPU() - cpu0 - time.Duration(m.cpu.Load()-in0)) / perRound
	}
	m.cpu.Store(0)
	m.calls.Store(0)
	slices.Sort(costs)
	return costs[rounds/2]
}

func metered[T any](m *meteredHNS, fn func() (T, error)) (out T, err error) {
	m.meter(func() { out, err = fn() })
	return out, err
}

func (m *meteredHNS) meterErr(fn func() error) (err error) {
	m.meter(func() { err = fn() })
	return err
}

func (m *meteredHNS) Version(ctx context.Context) (hnslb.Version, error) {
	return metered(m, func() (hnslb.Version, error) { return m.inner.Version(ctx) })
}

func (m *meteredHNS) OSBuild(ctx context.Context) (hnslb.OSBuild, error) {
	return metered(m, func() (hnslb.OSBuild, error) { return m.inner.OSBuild(ctx) })
}

func (m *meteredHNS) ServiceInstance(ctx context.Context) (string, error) {
	return metered(m, func() (string, error) { return m.inner.ServiceInstance(ctx) })
}

func (m *meteredHNS) ListNetworks(ctx context.Context) ([]hnslb.Network, error) {
	return metered(m, func() ([]hnslb.Network, error) { return m.inner.ListNetworks(ctx) })
}

func (m *meteredHNS) GetNetworkByID(ctx context.Context, id string) (*hnslb.Network, error) {
	return metered(m, func() (*hnslb.Network, error) { return m.inner.GetNetworkByID(ctx, id) })
}

func (m *meteredHNS) GetNetworkByName(ctx context.Context, name string) (*hnslb.Network, error) {
	return metered(m, func() (*hnslb.Network, error) { return m.inner.GetNetworkByName(ctx, name) })
}

func (m *meteredHNS) CreateNetwork(ctx context.Context, n *hnslb.Network) (*hnslb.Network, error) {
	return metered(m, func() (*hnslb.Network, error) { return m.inner.CreateNetwork(ctx, n) })
}

func (m *meteredHNS) DeleteNetwork(ctx context.Context, id string) error {
	return m.meterErr(func() error { return m.inner.DeleteNetwork(ctx, id) })
}

func (m *meteredHNS) CreateEndpoint(ctx context.Context, networkID string, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	return metered(m, func() (*hnslb.Endpoint, error) { return m.inner.CreateEndpoint(ctx, networkID, e) })
}

func (m *meteredHNS) GetEndpointByID(ctx context.Context, id string) (*hnslb.Endpoint, error) {
	return metered(m, func() (*hnslb.Endpoint, error) { return m.inner.GetEndpointByID(ctx, id) })
}

func (m *meteredHNS) GetEndpointByName(ctx context.Context, name string) (*hnslb.Endpoint, error) {
	return metered(m, func() (*hnslb.Endpoint, error) { return m.inner.GetEndpointByName(ctx, name) })
}

func (m *meteredHNS) ListEndpoints(ctx context.Context) ([]hnslb.Endpoint, error) {
	return metered(m, func() ([]hnslb.Endpoint, error) { return m.inner.ListEndpoints(ctx) })
}

func (m *meteredHNS) ListEndpointsOfNetwork(ctx context.Context, networkID string) ([]hnslb.Endpoint, error) {
	return metered(m, func() ([]hnslb.Endpoint, error) { return m.inner.ListEndpointsOfNetwork(ctx, networkID) })
}

func (m *meteredHNS) DeleteEndpoint(ctx context.Context, id string) error {
	return m.meterErr(func() error { return m.inner.DeleteEndpoint(ctx, id) })
}

func (m *meteredHNS) CreateNamespace(ctx context.Context, ns *hnslb.Namespace) (*hnslb.Namespace, error) {
	return metered(m, func() (*hnslb.Namespace, error) { return m.inner.CreateNamespace(ctx, ns) })
}

func (m *meteredHNS) GetNamespaceByID(ctx context.Context, id string) (*hnslb.Namespace, error) {
	return metered(m, func() (*hnslb.Namespace, error) { return m.inner.GetNamespaceByID(ctx, id) })
}

func (m *meteredHNS) ListNamespaces(ctx context.Context) ([]hnslb.Namespace, error) {
	return metered(m, func() ([]hnslb.Namespace, error) { return m.inner.ListNamespaces(ctx) })
}

func (m *meteredHNS) DeleteNamespace(ctx context.Context, id string) error {
	return m.meterErr(func() error { return m.inner.DeleteNamespace(ctx, id) })
}

func (m *meteredHNS) AddNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error {
	return m.meterErr(func() error { return m.inner.AddNamespaceEndpoint(ctx, namespaceID, endpointID) })
}

func (m *meteredHNS) RemoveNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error {
	return m.meterErr(func() error { return m.inner.RemoveNamespaceEndpoint(ctx, namespaceID, endpointID) })
}

func (m *meteredHNS) CreateLoadBalancer(ctx context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	return metered(m, func() (*hnslb.LoadBalancer, error) { return m.inner.CreateLoadBalancer(ctx, lb) })
}

func (m *meteredHNS) UpdateLoadBalancer(ctx context.Context, id string, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	return metered(m, func() (*hnslb.LoadBalancer, error) { return m.inner.UpdateLoadBalancer(ctx, id, lb) })
}

func (m *meteredHNS) GetLoadBalancerByID(ctx context.Context, id string) (*hnslb.LoadBalancer, error) {
	return metered(m, func() (*hnslb.LoadBalancer, error) { return m.inner.GetLoadBalancerByID(ctx, id) })
}

func (m *meteredHNS) ListLoadBalancers(ctx context.Context) ([]hnslb.LoadBalancer, error) {
	return metered(m, func() ([]hnslb.LoadBalancer, error) { return m.inner.ListLoadBalancers(ctx) })
}

func (m *meteredHNS) DeleteLoadBalancer(ctx context.Context, id string) error {
	return m.meterErr(func() error { return m.inner.DeleteLoadBalancer(ctx, id) })
}
