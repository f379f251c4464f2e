package main

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// The faults API hangs the operations it names, releases them when asked
// without them, and refuses operations the simulator does not have.
func TestSetFaultsHangs(t *testing.T) {
	ctx := context.Background()
	n := &node{hns: sim.New(sim.Options{Seed: 1})}
	for _, bad := range []remote.FaultsRequest{{Hang: []string{"Frobnicate"}}, {HangReply: []string{"createloadbalancer"}}} {
		if err := n.setFaults(bad); err == nil {
			t.Errorf("setFaults(%+v) accepted an unknown operation", bad)
		}
	}
	if err := n.setFaults(remote.FaultsRequest{Hang: []string{string(sim.OpListLoadBalancers)}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := n.hns.ListLoadBalancers(ctx)
		done <- err
	}()
	if err := n.hns.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := n.hns.ListNetworks(ctx); err != nil {
		t.Errorf("an operation that is not hung: %v", err)
	}
	if err := n.setFaults(remote.FaultsRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("released list: %v", err)
	}
}

// A restart request drops what it names, and an unknown loss is refused
// before anything is applied.
// nodeWithEndpoint is a node whose simulator holds a network and one
// endpoint on it.
func nodeWithEndpoint(t *testing.T) (*node, *hnslb.Endpoint) {
	t.Helper()
	ctx := context.Background()
	n := &node{hns: sim.New(sim.Options{Seed: 1})}
	nw, err := n.hns.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := n.hns.CreateEndpoint(ctx, nw.ID, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5"}}})
	if err != nil {
		t.Fatal(err)
	}
	return n, ep
}

func TestSetFaultsRestartLoses(t *testing.T) {
	ctx := context.Background()
	n, ep := nodeWithEndpoint(t)
	if _, err := n.hns.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{
		FrontendVIPs: []string{"10.96.0.10"}, HostComputeEndpoints: []string{ep.ID},
		PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: 80, InternalPort: 8080}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := n.setFaults(remote.FaultsRequest{Restart: remote.Duration(time.Millisecond), RestartLoses: "everything"}); err == nil {
		t.Error("an unknown restart loss was taken")
	}
	if got := len(n.hns.Snapshot().LoadBalancers); got != 1 {
		t.Fatalf("a refused request dropped load balancers: %d left", got)
	}
	if err := n.setFaults(remote.FaultsRequest{Restart: remote.Duration(time.Millisecond), RestartLoses: string(sim.RestartLosesLoadBalancers)}); err != nil {
		t.Fatal(err)
	}
	if snap := n.hns.Snapshot(); len(snap.LoadBalancers) != 0 || len(snap.Endpoints) != 1 {
		t.Errorf("after a restart losing load balancers: %d load balancers, %d endpoints; want 0, 1", len(snap.LoadBalancers), len(snap.Endpoints))
	}
}

// TestSetFaultsTakenPorts: a taken port refuses new frontends on it as
// "port already exists" with no load balancer to list; a malformed one is
// refused before any fault changes.
func TestSetFaultsTakenPorts(t *testing.T) {
	ctx := context.Background()
	n, ep := nodeWithEndpoint(t)
	create := func() error {
		_, err := n.hns.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{
			FrontendVIPs: []string{"10.96.0.10"}, HostComputeEndpoints: []string{ep.ID},
			PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: 10256, InternalPort: 10256}},
		})
		return err
	}
	for _, bad := range []string{"sctp/10256", "tcp/0", "tcp/70000", "10256"} {
		if err := n.setFaults(remote.FaultsRequest{TakenPorts: []string{"udp/53", bad}}); err == nil {
			t.Errorf("taken port %q was accepted", bad)
		}
	}
	if err := n.setFaults(remote.FaultsRequest{TakenPorts: []string{"TCP/10256"}}); err != nil {
		t.Fatal(err)
	}
	if err := create(); !hnslb.IsPortAlreadyExists(err) {
		t.Fatalf("create on a taken port: %v, want port already exists", err)
	}
	if got := len(n.hns.Snapshot().LoadBalancers); got != 0 {
		t.Errorf("%d load balancers listed, want none holding the port", got)
	}
	if err := n.setFaults(remote.FaultsRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := create(); err != nil {
		t.Errorf("create after the port was freed: %v", err)
	}
}

// TestSetFaultsKeptOnDelete: --kept-on-delete reaches the simulator (a
// delete reported done keeps its endpoint), and a share outside 0..1 is
// refused before any fault changes.
func TestSetFaultsKeptOnDelete(t *testing.T) {
	ctx := context.Background()
	n, ep := nodeWithEndpoint(t)
	for _, bad := range []float64{-0.1, 1.5, math.NaN()} {
		if err := n.setFaults(remote.FaultsRequest{KeptOnDelete: bad}); err == nil {
			t.Errorf("kept-on-delete share %v was accepted", bad)
		}
	}
	setFaultsByFlags(t, n, "--kept-on-delete=1")
	if err := n.hns.DeleteEndpoint(ctx, ep.ID); err != nil {
		t.Fatalf("delete reported %v, want success", err)
	}
	if got := len(n.hns.Snapshot().Endpoints); got != 1 {
		t.Errorf("%d endpoints after a delete the fault keeps, want 1", got)
	}
}

// TestSetFaultsReservedAddresses: --reserved-address reaches the simulator
// (an endpoint create on it is refused as invalid or reserved, with nothing
// holding it), and what is not an IP is refused before any fault changes.
func TestSetFaultsReservedAddresses(t *testing.T) {
	ctx := context.Background()
	n, ep := nodeWithEndpoint(t)
	create := func() error {
		_, err := n.hns.CreateEndpoint(ctx, ep.HostComputeNetwork, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.9"}}})
		return err
	}
	for _, bad := range []string{"10.244.1", "10.244.1.9/32", ""} {
		if err := n.setFaults(remote.FaultsRequest{ReservedAddresses: []string{"10.244.1.8", bad}}); err == nil {
			t.Errorf("reserved address %q was accepted", bad)
		}
	}
	setFaultsByFlags(t, n, "--reserved-address=10.244.1.9")
	if err := create(); !hnslb.IsAddressRefused(err) || hnslb.IsAlreadyExists(err) {
		t.Fatalf("create on a reserved address: %v, want invalid or reserved (0x803b002f)", err)
	}
	if got := len(n.hns.Snapshot().Endpoints); got != 1 {
		t.Errorf("%d endpoints listed, want only the one made before", got)
	}
	if err := n.setFaults(remote.FaultsRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := create(); err != nil {
		t.Errorf("create after the reservation was lifted: %v", err)
	}
}

// setFaultsByFlags sets n's faults from `hnssim faults` flags, as the
// command sends them.
func setFaultsByFlags(t *testing.T, n *node, args ...string) {
	t.Helper()
	var f faultFlags
	fs := pflag.NewFlagSet("faults", pflag.ContinueOnError)
	f.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	req, err := f.request()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.setFaults(req); err != nil {
		t.Fatal(err)
	}
}

// `hnssim faults --partial-creates --partial-holds-frontend` reach HNS: a
// failed create leaves a load balancer without port mappings that holds its
// frontend; a share outside 0..1 is refused before anything changes.
func TestSetFaultsPartialCreates(t *testing.T) {
	ctx := context.Background()
	n, ep := nodeWithEndpoint(t)
	if err := n.setFaults(remote.FaultsRequest{PartialCreates: 1.5}); err == nil {
		t.Error("partialCreates 1.5 was accepted")
	}
	doc := &hnslb.LoadBalancer{FrontendVIPs: []string{"10.96.0.10"}, HostComputeEndpoints: []string{ep.ID},
		PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: 80, InternalPort: 8080}}}
	setFaultsByFlags(t, n, "--error-rate=CreateLoadBalancer=1", "--error-code=0x57", "--partial-creates=1", "--partial-holds-frontend")
	if _, err := n.hns.CreateLoadBalancer(ctx, doc); !hnslb.IsInvalidParameter(err) {
		t.Fatalf("create: %v, want the injected 0x57", err)
	}
	setFaultsByFlags(t, n)
	if lbs := n.hns.Snapshot().LoadBalancers; len(lbs) != 1 || len(lbs[0].PortMappings) != 0 {
		t.Fatalf("load balancers %+v, want one without port mappings", lbs)
	}
	if _, err := n.hns.CreateLoadBalancer(ctx, doc); !hnslb.IsPortAlreadyExists(err) {
		t.Errorf("create on the frontend it holds: %v, want port already exists", err)
	}
}

// TestSetFaultsKeptDeletes: --kept-deletes reaches the simulator (the next
// delete reported done keeps its endpoint, the one after removes it), and a
// count below 0 or above the bound is refused.
func TestSetFaultsKeptDeletes(t *testing.T) {
	ctx := context.Background()
	n, ep := nodeWithEndpoint(t)
	for _, bad := range []int{-1, remote.MaxFaultKeptDeletes + 1} {
		if err := n.setFaults(remote.FaultsRequest{KeptDeletes: bad}); err == nil {
			t.Errorf("kept-deletes %d was accepted", bad)
		}
	}
	setFaultsByFlags(t, n, "--kept-deletes=1")
	for i, left := range []int{1, 0} {
		if err := n.hns.DeleteEndpoint(ctx, ep.ID); err != nil {
			t.Fatalf("delete reported %v, want success", err)
		}
		if got := len(n.hns.Snapshot().Endpoints); got != left {
			t.Errorf("%d endpoints after delete %d, want %d", got, i+1, left)
		}
	}
}

// TestSetFaultsListings: --listed-twice and --left-out-of-listings reach
// the simulator (a listing answers the endpoint twice, then not at all,
// while a get still finds it), and a share outside 0..1 is refused.
func TestSetFaultsListings(t *testing.T) {
	ctx := context.Background()
	n, ep := nodeWithEndpoint(t)
	for _, bad := range []remote.FaultsRequest{{ListedTwice: 1.5}, {LeftOutOfListings: -0.1}} {
		if err := n.setFaults(bad); err == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
	for _, c := range []struct {
		flag   string
		listed int
	}{{"--listed-twice=1", 2}, {"--left-out-of-listings=1", 0}} {
		setFaultsByFlags(t, n, c.flag)
		if eps, err := n.hns.ListEndpoints(ctx); err != nil || len(eps) != c.listed {
			t.Errorf("%s: %d endpoints listed, %v; want %d", c.flag, len(eps), err, c.listed)
		}
		if got, err := n.hns.GetEndpointByID(ctx, ep.ID); err != nil || got.ID != ep.ID {
			t.Errorf("%s: get %+v, %v; want the endpoint", c.flag, got, err)
		}
	}
	setFaultsByFlags(t, n)
	if eps, err := n.hns.ListEndpoints(ctx); err != nil || len(eps) != 1 {
		t.Errorf("faults lifted: %d endpoints listed, %v; want 1", len(eps), err)
	}
}

// TestSetFaultsLeftOutInARow: --left-out-in-a-row reaches the simulator (a
// listing that would leave the endpoint out every time lists it after two
// that did), and a bound below 0 is refused.
func TestSetFaultsLeftOutInARow(t *testing.T) {
	ctx := context.Background()
	n, _ := nodeWithEndpoint(t)
	if bad := (remote.FaultsRequest{LeftOutInARow: -1}); n.setFaults(bad) == nil {
		t.Errorf("%+v was accepted", bad)
	}
	setFaultsByFlags(t, n, "--left-out-of-listings=1", "--left-out-in-a-row=2")
	var listed []int
	for range 3 {
		eps, err := n.hns.ListEndpoints(ctx)
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, len(eps))
	}
	if want := []int{0, 0, 1}; !slices.Equal(listed, want) {
		t.Errorf("endpoints each listing showed %v, want %v", listed, want)
	}
}

// TestSetFaultsGetsLeaveOut: --gets-leave-out reaches the simulator: a get
// by ID answers not found for an endpoint the listings leave out.
func TestSetFaultsGetsLeaveOut(t *testing.T) {
	ctx := context.Background()
	n, ep := nodeWithEndpoint(t)
	setFaultsByFlags(t, n, "--left-out-of-listings=1", "--gets-leave-out")
	if got, err := n.hns.GetEndpointByID(ctx, ep.ID); !hnslb.IsNotFound(err) {
		t.Errorf("get %+v, %v; want not found", got, err)
	}
	setFaultsByFlags(t, n, "--left-out-of-listings=1")
	if _, err := n.hns.GetEndpointByID(ctx, ep.ID); err != nil {
		t.Errorf("without --gets-leave-out: %v; want the endpoint", err)
	}
}
