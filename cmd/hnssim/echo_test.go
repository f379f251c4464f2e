package main

import (
	"context"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// The echo request (--echo and "hnssim echo") reaches the simulator and the
// wire, and an unknown option is refused with no change.
func TestSetEcho(t *testing.T) {
	ctx := context.Background()
	n := &node{hns: sim.New(sim.Options{Seed: 1})}
	if err := n.setEcho(remote.EchoRequest{Echo: "upper-guids,unknown-fields"}); err != nil {
		t.Fatal(err)
	}
	if !n.unknownFields.Load() {
		t.Error("unknown-fields not on the wire")
	}
	nw, err := n.hns.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := n.hns.CreateEndpoint(ctx, nw.ID, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5"}}})
	if err != nil || ep.ID != strings.ToUpper(ep.ID) {
		t.Errorf("endpoint %+v %v: want an upper-case ID", ep, err)
	}
	if err := n.setEcho(remote.EchoRequest{Echo: "upper-guids,loud"}); err == nil {
		t.Error("an unknown echo option was accepted")
	}
	if !n.unknownFields.Load() {
		t.Error("a refused request changed the echo")
	}
}
