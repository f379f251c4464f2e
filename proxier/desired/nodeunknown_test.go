package desired

import (
	"net/netip"
	"reflect"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/intent"
)

// noNode is an endpoint option: the slice names no node (nodeName unset).
func noNode(e *discoveryv1.Endpoint) { e.NodeName = nil }

// emptyNode is an endpoint option: nodeName set to "".
func emptyNode(e *discoveryv1.Endpoint) { e.NodeName = new(string) }

// TestEndpointWithoutNodeMayBeLocal: an EndpointSlice endpoint that names
// no node (unset or "") is remote, as in kube-proxy, but its backend and
// remote endpoint say that its node is unknown: winkernel serves it with
// the local endpoint HNS holds at the address, if any, and the reconciler
// does the same (intent.Backend.NodeUnknown, RemoteEndpoint.UnlessLocal).
// On overlay its provider address is what the remote subnets say, as
// before (here a broad route covers this node's subnet too).
func TestEndpointWithoutNodeMayBeLocal(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode func(*Config)
		node epOpt
		pa   string
	}{
		{"l2bridge, nodeName unset", func(*Config) {}, noNode, ""},
		{"l2bridge, nodeName empty", func(*Config) {}, emptyNode, ""},
		{"overlay, nodeName unset", overlay, noNode, "192.168.0.12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config()
			tc.mode(&cfg)
			in := ServiceInput{Service: service("web"), Slices: slicesOf(slice("web-1", 8080, ep("10.1.0.2", tc.node)))}
			s := Compute([]ServiceInput{in}, cfg)
			lb, ok := s.LBs[key("10.0.0.1", 80)]
			if !ok {
				t.Fatalf("no load balancer: %+v", s.LBs)
			}
			want := []intent.Backend{{IP: "10.1.0.2", NodeUnknown: true, ProviderAddress: tc.pa}}
			if !reflect.DeepEqual(lb.Backends, want) {
				t.Errorf("backends %+v, want %+v", lb.Backends, want)
			}
			wantEP := intent.RemoteEndpoint{IP: "10.1.0.2", MAC: "02-11-0a-01-00-02", ProviderAddress: tc.pa, UnlessLocal: true}
			if got := s.RemoteEndpoints["10.1.0.2"]; got != wantEP {
				t.Errorf("remote endpoint %+v, want %+v", got, wantEP)
			}
		})
	}
}

// TestEndpointNamingANodeMakesItsRemoteEndpointUnconditional: one address
// that one Service's slice places on another node and another's names no
// node for: the remote endpoint is wanted outright while the placed one
// counts (the reconciler then keeps it even where a local endpoint holds the
// address), and only while no local endpoint holds it once none does.
func TestEndpointNamingANodeMakesItsRemoteEndpointUnconditional(t *testing.T) {
	cfg := config()
	s := NewState(cfg)
	placed := ServiceInput{Service: service("placed", clusterIPs("10.0.0.1")), Slices: slicesOf(slice("placed-1", 8080, ep("10.1.0.2")))}
	unplaced := ServiceInput{Service: service("unplaced", clusterIPs("10.0.0.2")), Slices: slicesOf(slice("unplaced-1", 8080, ep("10.1.0.2", noNode)))}
	s.Set(ForService(unplaced, cfg))
	if !s.RemoteEndpoints["10.1.0.2"].UnlessLocal {
		t.Fatalf("only a slice without node: %+v, want UnlessLocal", s.RemoteEndpoints["10.1.0.2"])
	}
	ch := s.Set(ForService(placed, cfg))
	if s.RemoteEndpoints["10.1.0.2"].UnlessLocal || !reflect.DeepEqual(ch.RemoteEndpoints, []string{"10.1.0.2"}) {
		t.Errorf("a slice names the node too: %+v (changed %v), want wanted outright", s.RemoteEndpoints["10.1.0.2"], ch.RemoteEndpoints)
	}
	ch = s.Delete(nsName("ns", "placed"))
	if !s.RemoteEndpoints["10.1.0.2"].UnlessLocal || !reflect.DeepEqual(ch.RemoteEndpoints, []string{"10.1.0.2"}) {
		t.Errorf("the placing Service gone: %+v (changed %v), want UnlessLocal", s.RemoteEndpoints["10.1.0.2"], ch.RemoteEndpoints)
	}
	// Incremental and from scratch agree.
	if want := Compute([]ServiceInput{unplaced}, cfg).RemoteEndpoints; !reflect.DeepEqual(s.RemoteEndpoints, want) {
		t.Errorf("incremental %+v, from scratch %+v", s.RemoteEndpoints, want)
	}
}

// TestOverlayEndpointWithoutNodeInThisNodesPodSubnetKeepsTheSourceVIP: on
// overlay a backend outside every remote subnet makes its load balancers
// use the node IP as source VIP (winkernel takes it for a public IP). An
// address in this node's own pod subnet that its slice places on no node
// is this node's pod, which winkernel serves by its local endpoint without
// taking that path: the source VIP stays. Placed on another node, or
// outside the node's pod subnet, the address is still taken for public.
func TestOverlayEndpointWithoutNodeInThisNodesPodSubnetKeepsTheSourceVIP(t *testing.T) {
	cfg := config()
	overlay(&cfg)
	cfg.PodCIDRs = []netip.Prefix{netip.MustParsePrefix("10.9.0.0/24")}
	for _, tc := range []struct {
		name string
		ep   discoveryv1.Endpoint
		src  string
	}{
		{"no node, this node's pod subnet", ep("10.9.0.5", noNode), "10.1.0.250"},
		{"no node, outside it", ep("203.0.113.5", noNode), nodeIPv4},
		{"another node", ep("10.9.0.5"), nodeIPv4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ForService(ServiceInput{Service: service("web"), Slices: slicesOf(slice("web-1", 8080, tc.ep))}, cfg)
			lb := lbByKey(t, r, key("10.0.0.1", 80))
			if lb.SourceVIP != tc.src {
				t.Errorf("source VIP %s, want %s", lb.SourceVIP, tc.src)
			}
			if len(lb.Backends) != 1 || lb.Backends[0].ProviderAddress != nodeIPv4 {
				t.Errorf("backends %+v, want one with provider address %s", lb.Backends, nodeIPv4)
			}
		})
	}
}
