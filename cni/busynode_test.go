package cni_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// TestPodCommandsCostTheSameOnABusyNode: ADD, CHECK, STATUS and DEL make
// as many hcn RPCs on a node whose HNS holds a thousand remote endpoints
// and load balancers and 20 other pods as on a node with nothing else:
// each looks up what it needs by name or ID (hcn's filtered queries) and
// lists nothing, so a pod's start does not slow down as the node's HNS
// fills. BenchmarkBusyOverlayNode gives the figures.
func TestPodCommandsCostTheSameOnABusyNode(t *testing.T) {
	ctx := context.Background()
	node, rt := overlayNodeForPods(t)
	costs := func(id string) map[string]int {
		p := pod{id: id, netns: node.createNamespace(t)}
		out := map[string]int{}
		measure := func(command string, run func() error) {
			before := hcnCalls(t, node.client)
			if err := run(); err != nil {
				t.Fatalf("%s %s: %v", command, id, err)
			}
			out[command] = hcnCalls(t, node.client) - before
		}
		measure("ADD", func() error { _, err := rt.cni.AddNetworkList(ctx, rt.list, p.rt()); return err })
		measure("CHECK", func() error { return rt.check(p) })
		measure("STATUS", func() error { return rt.cni.GetStatusNetworkList(ctx, rt.list) })
		measure("DEL", func() error { return rt.cni.DelNetworkList(ctx, rt.list, p.rt()) })
		return out
	}
	alone := costs("alone")
	fillWithServiceProxyObjects(t, node.client, 1000, 1000)
	for i := range 20 {
		rt.add(t, pod{id: fmt.Sprintf("other%02d", i), netns: node.createNamespace(t)})
	}
	if busy := costs("busy"); !maps.Equal(alone, busy) {
		t.Errorf("hcn RPCs per command: %v on a busy node, %v on an empty one", busy, alone)
	}
}

// overlayNodeForPods is an hnssim overlay node with room for 500 pods, and
// a runtime wiring pods into it.
func overlayNodeForPods(t testing.TB) (*simNode, *runtime) {
	node := startNode(t, "n1", "--node-ip", "192.168.0.1", "--network-name", "vxlan0", "--network-type", "overlay",
		"--subnet", "10.244.0.0/23")
	conf := netConf{version: "1.1.0", mode: "overlay", network: "vxlan0", subnet: "10.244.0.0/23", socket: node.socket, dataDir: t.TempDir()}
	return node, newRuntime(t, conf)
}

// The busy overlay node of BenchmarkBusyOverlayNode: kubelet's largest
// max-pods of common Windows setups, and what a service proxy keeps beside
// them on a large overlay cluster (a remote endpoint per remote pod that
// backs a Service, a load balancer per Service port).
const (
	busyPods            = 250
	busyRemoteEndpoints = 10_000
	busyLoadBalancers   = 10_000
)

// BenchmarkBusyOverlayNode runs each CNI command through libcni, as a
// runtime does, against an hnssim overlay node that holds busyPods pods
// hnscni wired, busyRemoteEndpoints remote endpoints and busyLoadBalancers
// load balancers, and reports the hcn RPCs each command costs
// (hcn-rpcs/op, from hnssim's counters: a get or list is 1 + 3 per object
// it returns) and its wall time, with no HNS latency and with 0.2 ms per
// hcn RPC (docs/benchmarks.md's wall-time model). A command whose RPCs grow
// with the node's HNS population shows it here (docs/cni.md, Cost on a
// busy node).
func BenchmarkBusyOverlayNode(b *testing.B) {
	ctx := context.Background()
	node, rt := overlayNodeForPods(b)
	fillWithServiceProxyObjects(b, node.client, busyRemoteEndpoints, busyLoadBalancers)

	var valid []types.GCAttachment
	newPod := func(id string) pod {
		ns, err := node.client.CreateNamespace(ctx, &hnslb.Namespace{Type: hnslb.NamespaceTypeHost, SchemaVersion: hnslb.V2})
		if err != nil {
			b.Fatal(err)
		}
		return pod{id: id, netns: ns.ID}
	}
	var pods []pod
	for i := range busyPods {
		p := newPod(fmt.Sprintf("pod%03d", i))
		rt.add(b, p)
		pods = append(pods, p)
		valid = append(valid, types.GCAttachment{ContainerID: p.id, IfName: "eth0"})
	}

	// op measures one command per iteration: setup and teardown (a new
	// pod's namespace and ADD, a DEL after) run outside the timer and the
	// RPC count.
	op := func(b *testing.B, setup func(i int) pod, run func(p pod) error, teardown func(p pod)) {
		rpcs := 0
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			p := setup(i)
			before := hcnCalls(b, node.client)
			b.StartTimer()
			if err := run(p); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			rpcs += hcnCalls(b, node.client) - before
			teardown(p)
			b.StartTimer()
		}
		b.ReportMetric(float64(rpcs)/float64(b.N), "hcn-rpcs/op")
	}
	existing := func(int) pod { return pods[0] }
	none := func(pod) {}
	fresh := func(i int) pod { return newPod(fmt.Sprintf("new%06d", i)) }
	added := func(i int) pod { p := fresh(i); rt.add(b, p); return p }
	for _, latency := range []time.Duration{0, 200 * time.Microsecond} {
		d := remote.Duration(latency)
		if err := node.client.SetFaults(ctx, remote.FaultsRequest{Latency: &d}); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("rpc=%v", latency), func(b *testing.B) {
			b.Run("ADD", func(b *testing.B) {
				op(b, fresh, func(p pod) error {
					_, err := rt.cni.AddNetworkList(ctx, rt.list, p.rt())
					return err
				}, func(p pod) { rt.del(b, p) })
			})
			b.Run("CHECK", func(b *testing.B) {
				op(b, existing, func(p pod) error { return rt.check(p) }, none)
			})
			b.Run("DEL", func(b *testing.B) {
				op(b, added, func(p pod) error { return rt.cni.DelNetworkList(ctx, rt.list, p.rt()) }, none)
			})
			b.Run("STATUS", func(b *testing.B) {
				op(b, existing, func(pod) error { return rt.cni.GetStatusNetworkList(ctx, rt.list) }, none)
			})
			b.Run("GC", func(b *testing.B) {
				op(b, existing, func(pod) error {
					return rt.cni.GCNetworkList(ctx, rt.list, &libcni.GCArgs{ValidAttachments: valid})
				}, none)
			})
		})
	}
}

// fillWithServiceProxyObjects gives the node what Flannel and a service
// proxy keep on a large overlay cluster: a remote subnet route per other
// node, remote endpoints for pods on those nodes (200 a node) and a load
// balancer per Service, each on one of them.
func fillWithServiceProxyObjects(t testing.TB, hns *remote.Client, remoteEndpoints, loadBalancers int) {
	t.Helper()
	ctx := context.Background()
	network, err := hns.GetNetworkByName(ctx, "vxlan0")
	if err != nil {
		t.Fatal(err)
	}
	const podsPerNode = 200
	routes := make([]hnslb.RemoteSubnetRoutePolicySetting, (remoteEndpoints+podsPerNode-1)/podsPerNode)
	for n := range routes {
		routes[n] = hnslb.RemoteSubnetRoutePolicySetting{DestinationPrefix: fmt.Sprintf("10.245.%d.0/24", n), IsolationId: 4096,
			ProviderAddress: fmt.Sprintf("192.168.1.%d", 2+n), DistributedRouterMacAddress: fmt.Sprintf("0E-2A-C0-A8-01-%02X", 2+n)}
	}
	if err := hns.SetRemoteSubnets(ctx, remote.RemoteSubnetsRequest{Network: network.Name, Routes: routes}); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, remoteEndpoints)
	for i := range ids {
		n := i / podsPerNode
		ep, err := hns.CreateEndpoint(ctx, network.ID, &hnslb.Endpoint{
			IpConfigurations: []hnslb.IPConfig{{IpAddress: fmt.Sprintf("10.245.%d.%d", n, 2+i%podsPerNode)}},
			Flags:            hnslb.EndpointFlagsRemoteEndpoint,
			Policies: []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
				hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: fmt.Sprintf("192.168.1.%d", 2+n)})},
			SchemaVersion: hnslb.V2,
		})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = ep.ID
	}
	for i := range loadBalancers {
		if _, err := hns.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{
			FrontendVIPs:         []string{fmt.Sprintf("10.96.%d.%d", i/250, 1+i%250)},
			HostComputeEndpoints: []string{ids[i%len(ids)]},
			PortMappings:         []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: 80, InternalPort: 8080}},
			SchemaVersion:        hnslb.V2,
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// hcnCalls is hnssim's count of hcn RPCs served so far.
func hcnCalls(t testing.TB, hns *remote.Client) int {
	t.Helper()
	raw, err := hns.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ HCNCalls int }
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s.HCNCalls
}
