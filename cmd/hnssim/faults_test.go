package main

import (
	"context"
	"testing"

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
