package remote_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// TestEchoOverTheWire: SetEcho reaches the served simulator, its answers
// travel as they are, and unknown fields on the wire are ignored by the
// client as hcn ignores them.
func TestEchoOverTheWire(t *testing.T) {
	ctx := context.Background()
	var h *sim.HNS
	var unknown atomic.Bool
	setEcho := func(req remote.EchoRequest) error {
		e, err := sim.ParseEcho(req.Echo)
		if err != nil {
			return err
		}
		h.SetEcho(e)
		unknown.Store(e.UnknownFields)
		return nil
	}
	h = sim.New(sim.Options{Profile: sim.Profiles()[len(sim.Profiles())-1], Seed: 7})
	path := socketPath(t)
	l, err := remote.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: remote.WithUnknownFields(remote.NewServer(h, remote.Extras{SetEcho: setEcho}), unknown.Load)}
	go remote.Serve(srv, l)
	t.Cleanup(func() { srv.Close() })
	c := remote.NewClient(path)
	t.Cleanup(c.Close)

	n, err := c.CreateNetwork(ctx, l2bridge("cbr0"))
	if err != nil {
		t.Fatal(err)
	}
	ep, err := c.CreateEndpoint(ctx, n.ID, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetEcho(ctx, remote.EchoRequest{Echo: "upper-guids,drop-undeclared-flags,unknown-fields"}); err != nil {
		t.Fatal(err)
	}
	lb, err := c.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{HostComputeEndpoints: []string{ep.ID},
		PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 80, ExternalPort: 30080,
			Flags: hnslb.PortMappingFlagsLocalRoutedVIP | hnslb.PortMappingFlagsVipExternalIP}}})
	if err != nil {
		t.Fatal(err)
	}
	if lb.ID != strings.ToUpper(lb.ID) || lb.PortMappings[0].Flags != hnslb.PortMappingFlagsLocalRoutedVIP ||
		lb.HostComputeEndpoints[0] != strings.ToUpper(ep.ID) {
		t.Errorf("create reply %+v", lb)
	}
	// The raw answer carries HNS's own fields.
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	rawGet := func(url string) string {
		t.Helper()
		resp, err := hc.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return string(raw)
	}
	if raw := rawGet("http://hnssim/loadbalancers"); !strings.Contains(raw, `"IsApplied":false`) || !strings.Contains(raw, strings.ToUpper(lb.ID)) {
		t.Errorf("raw list %s", raw)
	}
	// A network's endpoints are answered with them too (hnsproxy lists those at its start).
	if raw := rawGet("http://hnssim/networks/" + n.ID + "/endpoints"); !strings.Contains(raw, `"IsApplied":false`) || !strings.Contains(raw, strings.ToUpper(ep.ID)) {
		t.Errorf("raw list of the network's endpoints %s", raw)
	}
	if got, err := c.ListEndpointsOfNetwork(ctx, n.ID); err != nil || len(got) != 1 || got[0].ID != strings.ToUpper(ep.ID) {
		t.Errorf("endpoints of the network %+v %v", got, err)
	}
	if got, err := c.ListLoadBalancers(ctx); err != nil || len(got) != 1 || got[0].ID != lb.ID {
		t.Errorf("list %+v %v", got, err)
	}
	if err := c.SetEcho(ctx, remote.EchoRequest{Echo: "nonsense"}); !hnslb.IsInvalidParameter(err) {
		t.Errorf("an unknown echo option: %v", err)
	}
	if err := c.SetEcho(ctx, remote.EchoRequest{}); err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetLoadBalancerByID(ctx, lb.ID); err != nil || got.ID != strings.ToLower(lb.ID) ||
		got.PortMappings[0].Flags != hnslb.PortMappingFlagsLocalRoutedVIP|hnslb.PortMappingFlagsVipExternalIP {
		t.Errorf("exact again %+v %v", got, err)
	}
}
