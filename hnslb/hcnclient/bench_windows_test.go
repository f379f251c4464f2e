//go:build windows

package hcnclient

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// These benchmarks price what a call costs hnsproxy's own process: the
// client's conversions and hcn's code (JSON, UTF-16, handles, result
// buffers), against hack/wine's fake DLLs in quiet mode, which answer at once
// and echo what they were given. `hack/wine-test.sh --bench` runs them under
// Wine. They leave out HNS's side and the RPC to it: on a node, each DLL
// call crosses into HNS's service, and the calling thread waits in the
// kernel. Besides ns/op they report the process CPU per call (cpu-ns/op).

// quietClient is the client against the fake DLLs in quiet mode.
func quietClient(b *testing.B) hnslb.Client {
	b.Helper()
	return clientOverFakeDLLs(b, "HNSPROXY_FAKE_QUIET",
		"prices hcn's code against hack/wine's quiet fake DLLs; this host has a real HNS",
		"hack/wine-test.sh --bench runs these benchmarks with the fake DLLs quiet")
}

// benchGUID is a GUID, distinct for each i.
func benchGUID(i int) string {
	return fmt.Sprintf("5d9a7c1e-3b2f-4e8a-9c6d-%012x", i)
}

// benchLoadBalancer is a document of the shape hnsproxy writes for a
// ClusterIP Service with backends endpoints.
func benchLoadBalancer(backends int) *hnslb.LoadBalancer {
	lb := &hnslb.LoadBalancer{
		SourceVIP:     "10.244.1.2",
		FrontendVIPs:  []string{"10.96.12.34"},
		PortMappings:  []hnslb.PortMapping{{Protocol: 6, InternalPort: 8080, ExternalPort: 80}},
		SchemaVersion: hnslb.V2,
	}
	for i := range backends {
		lb.HostComputeEndpoints = append(lb.HostComputeEndpoints, benchGUID(i))
	}
	return lb
}

// benchRemoteEndpoint is a remote endpoint of the shape hnsproxy creates;
// on overlay it carries the backend node's provider address.
func benchRemoteEndpoint(overlay bool) *hnslb.Endpoint {
	ep := &hnslb.Endpoint{
		Name:             "hnsproxy-remote-10.244.7.19",
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.7.19"}},
		MacAddress:       "02-11-0a-f4-07-13",
		Flags:            hnslb.EndpointFlagsRemoteEndpoint,
		SchemaVersion:    hnslb.V2,
	}
	if overlay {
		ep.Policies = []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
			hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: "10.0.0.17"})}
	}
	return ep
}

// processCPU is the process's user and kernel time so far.
func processCPU(b *testing.B) time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		b.Fatal(err)
	}
	return time.Duration(kernel.Nanoseconds() + user.Nanoseconds())
}

// runPriced runs op b.N times and reports the process CPU per run, which
// it returns in nanoseconds.
func runPriced(b *testing.B, op func() error) float64 {
	b.Helper()
	b.ReportAllocs()
	start := processCPU(b)
	for b.Loop() {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	perOp := float64((processCPU(b) - start).Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp, "cpu-ns/op")
	return perOp
}

// An update of a load balancer with what it holds: the write a readiness
// flip makes where HNS can modify (hcn: open, modify, query, close).
func BenchmarkUpdateLoadBalancer(b *testing.B) {
	for _, backends := range []int{10, 100} {
		b.Run(fmt.Sprintf("backends=%d", backends), func(b *testing.B) {
			c, ctx, lb := quietClient(b), context.Background(), benchLoadBalancer(backends)
			id := benchGUID(1 << 40)
			runPriced(b, func() error {
				got, err := c.UpdateLoadBalancer(ctx, id, lb)
				if err == nil && len(got.HostComputeEndpoints) != backends {
					err = fmt.Errorf("the update's answer has %d backends, want %d", len(got.HostComputeEndpoints), backends)
				}
				return err
			})
		})
	}
}

// A create of a load balancer (hcn: create, query, close).
func BenchmarkCreateLoadBalancer(b *testing.B) {
	c, ctx, lb := quietClient(b), context.Background(), benchLoadBalancer(10)
	runPriced(b, func() error {
		_, err := c.CreateLoadBalancer(ctx, lb)
		return err
	})
}

// A remote endpoint created and deleted: the endpoint writes a pod moving
// between nodes makes (hcn: open the network, create, query, close both;
// then delete).
func BenchmarkCreateDeleteRemoteEndpoint(b *testing.B) {
	for _, mode := range []string{"l2bridge", "overlay"} {
		b.Run(mode, func(b *testing.B) {
			c, ctx, ep := quietClient(b), context.Background(), benchRemoteEndpoint(mode == "overlay")
			network, id := benchGUID(1<<41), benchGUID(1<<42)
			runPriced(b, func() error {
				got, err := c.CreateEndpoint(ctx, network, ep)
				if err != nil {
					return err
				}
				if got.IP() != ep.IP() {
					return fmt.Errorf("the create's answer has IP %q, want %q", got.IP(), ep.IP())
				}
				return c.DeleteEndpoint(ctx, id)
			})
		})
	}
}

// A drift repair's listing of 100 load balancers of 10 backends (hcn:
// enumerate, then open, query and close each), walked as the reconciler
// walks it; cpu-ns/object is per load balancer.
func BenchmarkWalkLoadBalancers(b *testing.B) {
	const n = 100
	ids := make([]string, n)
	for i := range ids {
		ids[i] = `"` + benchGUID(i) + `"`
	}
	// A quiet enumerate answers the IDs as set before its first call.
	b.Setenv("HNSPROXY_FAKE_IDS", "["+strings.Join(ids, ",")+"]")
	c, ctx := quietClient(b), context.Background()
	// A quiet query answers with the last load balancer written.
	if _, err := c.CreateLoadBalancer(ctx, benchLoadBalancer(10)); err != nil {
		b.Fatal(err)
	}
	walker := c.(hnslb.Walker)
	perWalk := runPriced(b, func() error {
		seen := 0
		err := walker.WalkLoadBalancers(ctx, func(lb *hnslb.LoadBalancer) error {
			if seen++; len(lb.HostComputeEndpoints) != 10 {
				return fmt.Errorf("walked a load balancer of %d backends, want 10", len(lb.HostComputeEndpoints))
			}
			return nil
		})
		if err == nil && seen != n {
			err = fmt.Errorf("walked %d load balancers, want %d", seen, n)
		}
		return err
	})
	b.ReportMetric(perWalk/n, "cpu-ns/object")
}

// One quiet DLL call, through the same lazy-DLL path hcn takes: the part of
// each call above that is Wine's and the fake's, not hcn's or the client's.
func BenchmarkQuietDLLCall(b *testing.B) {
	quietClient(b)
	proc := windows.NewLazySystemDLL(hcnDLL).NewProc("HcnCloseLoadBalancer")
	runPriced(b, func() error {
		if hr, _, _ := proc.Call(1); hr != 0 {
			return fmt.Errorf("HcnCloseLoadBalancer returned %#x", hr)
		}
		return nil
	})
}
