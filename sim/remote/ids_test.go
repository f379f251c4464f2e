package remote_test

import (
	"context"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// IDs that are path syntax ("", ".", "..", "/") must reach HNS as IDs and
// come back as HNS answers them: invalid parameter, as hcn refuses any ID
// that is not a GUID. Over a path they were an empty segment or a dot
// segment the router cleaned and redirected, or a segment it took for a
// trailing slash ("page not found"), which came back as E_FAIL.
func TestPathSyntaxIDsAreRefusedAsHNSRefusesThem(t *testing.T) {
	ctx := context.Background()
	h, c, _ := serveSim(t, remote.Extras{})
	calls := map[string]func(hnslb.Client, string) error{
		"GetNetworkByID": func(x hnslb.Client, id string) error { _, err := x.GetNetworkByID(ctx, id); return err },
		"DeleteNetwork":  func(x hnslb.Client, id string) error { return x.DeleteNetwork(ctx, id) },
		"CreateEndpoint": func(x hnslb.Client, id string) error {
			_, err := x.CreateEndpoint(ctx, id, &hnslb.Endpoint{Name: "a"})
			return err
		},
		"EndpointsOf":     func(x hnslb.Client, id string) error { _, err := x.ListEndpointsOfNetwork(ctx, id); return err },
		"GetEndpointByID": func(x hnslb.Client, id string) error { _, err := x.GetEndpointByID(ctx, id); return err },
		"DeleteEndpoint":  func(x hnslb.Client, id string) error { return x.DeleteEndpoint(ctx, id) },
		"GetNamespace":    func(x hnslb.Client, id string) error { _, err := x.GetNamespaceByID(ctx, id); return err },
		"DeleteNamespace": func(x hnslb.Client, id string) error { return x.DeleteNamespace(ctx, id) },
		"AddNamespaceEndpoint": func(x hnslb.Client, id string) error {
			return x.AddNamespaceEndpoint(ctx, id, id)
		},
		"RemoveNamespaceEndpoint": func(x hnslb.Client, id string) error {
			return x.RemoveNamespaceEndpoint(ctx, "8e3c07a1-07c2-4a5b-9d9b-9a5c2a3a0c11", id)
		},
		"GetLoadBalancer": func(x hnslb.Client, id string) error { _, err := x.GetLoadBalancerByID(ctx, id); return err },
		"UpdateLoadBalancer": func(x hnslb.Client, id string) error {
			_, err := x.UpdateLoadBalancer(ctx, id, &hnslb.LoadBalancer{})
			return err
		},
		"DeleteLoadBalancer": func(x hnslb.Client, id string) error { return x.DeleteLoadBalancer(ctx, id) },
	}
	for _, id := range []string{"", ".", "..", "/", "a/b", "x/../y"} {
		for name, call := range calls {
			direct, remote := call(h, id), call(c, id)
			if (direct == nil) != (remote == nil) {
				t.Errorf("%s(%q): %v over the socket, %v on the simulator", name, id, remote, direct)
				continue
			}
			want, _ := hnslb.CodeOf(direct)
			if got, _ := hnslb.CodeOf(remote); got != want {
				t.Errorf("%s(%q) over the socket: %v, want code 0x%x as the simulator answers (%v)", name, id, remote, uint32(want), direct)
			}
		}
	}
}
