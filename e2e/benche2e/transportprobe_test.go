//go:build linux && benche2e

package main

import (
	"context"
	"reflect"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
	"github.com/hnsproxy/hnsproxy/sim/remote/remotetest"
)

// serveHNS serves a fresh ws2025 simulator on a unix socket.
func serveHNS(t *testing.T) (*sim.HNS, string) {
	t.Helper()
	profile, err := sim.ProfileByName(sim.ProfileWS2025)
	if err != nil {
		t.Fatal(err)
	}
	h := sim.New(sim.Options{Profile: profile, Seed: 1})
	return h, remotetest.Serve(t, remote.NewServer(h, remote.Extras{Dump: h.Snapshot}))
}

// remoteEndpoints creates an l2bridge network cbr0 on 10.244.1.0/24 and a
// remote endpoint at each of ips on it, and returns their IDs.
func remoteEndpoints(t *testing.T, c *remote.Client, ips ...string) []string {
	t.Helper()
	ctx := context.Background()
	n, err := c.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var eps []string
	for _, ip := range ips {
		ep, err := c.CreateEndpoint(ctx, n.ID, &hnslb.Endpoint{Name: "remote " + ip, IpConfigurations: []hnslb.IPConfig{{IpAddress: ip}},
			Flags: hnslb.EndpointFlagsRemoteEndpoint, SchemaVersion: hnslb.V2})
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, ep.ID)
	}
	return eps
}

// The probe updates the load balancer with the most backends with what
// HNS holds, the number of times asked (after its warm-up), leaves it as
// it was, and prices a call.
func TestTransportProbeUpdatesTheBusiestLoadBalancerInPlace(t *testing.T) {
	ctx := context.Background()
	h, socket := serveHNS(t)
	if _, err := transportProbe(ctx, socket, 10, true); err == nil {
		t.Fatal("probe of an HNS with no load balancer: no error")
	}
	c := remote.NewClient(socket)
	defer c.Close()
	eps := remoteEndpoints(t, c, "10.244.1.5", "10.244.1.254")
	var busiest *hnslb.LoadBalancer
	for i, backends := range [][]string{eps[:1], eps, eps[1:]} {
		lb, err := c.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{HostComputeEndpoints: backends, FrontendVIPs: []string{"10.96.0." + string(rune('1'+i))},
			PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 8080, ExternalPort: 80}}, SchemaVersion: hnslb.V2})
		if err != nil {
			t.Fatal(err)
		}
		if len(backends) == 2 {
			busiest = lb
		}
	}
	snap0, err := c.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if spare, err := spareRemoteEndpoint(snap0); err != nil || spare.IP() != "10.244.1.253" || spare.Name != probeName || !spare.IsRemote() {
		t.Fatalf("spare endpoint %+v, %v; want a remote one at .253 (.254 is taken) named %q", spare, err, probeName)
	}
	if spare, err := spareLoadBalancer(snap0, busiest); err != nil || !reflect.DeepEqual(spare.FrontendVIPs, []string{"10.96.0.254"}) ||
		spare.ID != "" || !reflect.DeepEqual(spare.HostComputeEndpoints, busiest.HostComputeEndpoints) {
		t.Fatalf("spare load balancer %+v, %v; want a copy of the busiest on 10.96.0.254, no ID", spare, err)
	}
	before := h.Counters()
	cost, err := transportProbe(ctx, socket, 30, true)
	if err != nil {
		t.Fatal(err)
	}
	if cost.update <= 0 || cost.lbWrite <= 0 || cost.endpointWrite <= 0 {
		t.Errorf("CPU per call %+v; want some of each", cost)
	}
	after := h.Counters()
	made := func(op sim.Op) int { return after.CountResult(op, sim.ResultOK) - before.CountResult(op, sim.ResultOK) }
	if got := made(sim.OpUpdateLoadBalancer); got != probeWarmup+30 {
		t.Errorf("%d updates; want the warm-up's %d and 30", got, probeWarmup)
	}
	if c, d := made(sim.OpCreateEndpoint), made(sim.OpDeleteEndpoint); c != probeWarmup+15 || d != c {
		t.Errorf("%d endpoint creates and %d deletes; want the warm-up's %d and 15 of each", c, d, probeWarmup)
	}
	if c, d := made(sim.OpCreateLoadBalancer), made(sim.OpDeleteLoadBalancer); c != probeWarmup+15 || d != c {
		t.Errorf("%d load balancer creates and %d deletes; want the warm-up's %d and 15 of each", c, d, probeWarmup)
	}
	if got := after.Writes() - before.Writes(); got != 5*probeWarmup+90 {
		t.Errorf("%d writes; want only the updates and the creates and deletes", got)
	}
	snap, err := c.Dump(ctx)
	if err != nil || len(snap.Endpoints) != 2 || len(snap.LoadBalancers) != 3 {
		t.Fatalf("after the probe HNS holds %d endpoints and %d load balancers (%v); want the 2 and 3 it had", len(snap.Endpoints), len(snap.LoadBalancers), err)
	}
	// Where HNS cannot modify, no update is made or priced.
	before = h.Counters()
	if cost, err = transportProbe(ctx, socket, 30, false); err != nil || cost.update != 0 || cost.lbWrite <= 0 {
		t.Errorf("probe without modify: %+v, %v; want no update priced, load balancer writes priced", cost, err)
	}
	if got := h.Counters().CountResult(sim.OpUpdateLoadBalancer, sim.ResultOK) - before.CountResult(sim.OpUpdateLoadBalancer, sim.ResultOK); got != 0 {
		t.Errorf("probe without modify made %d updates", got)
	}
	now, err := c.GetLoadBalancerByID(ctx, busiest.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(now.HostComputeEndpoints, busiest.HostComputeEndpoints) || !reflect.DeepEqual(now.FrontendVIPs, busiest.FrontendVIPs) {
		t.Errorf("the probed load balancer changed: %+v, was %+v", now, busiest)
	}
	if _, err := transportProbe(ctx, socket, 0, true); err == nil {
		t.Error("a probe of 0 calls: no error")
	}
}
