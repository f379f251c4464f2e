package main

import (
	"context"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// TestTraceFromOutsideNamesTheIngressFlag: a packet from outside the
// cluster to an address no node holds needs the node it enters at. The
// one who asked ran `hnssim trace`, so the answer names its --ingress
// flag, not the Go option behind it.
func TestTraceFromOutsideNamesTheIngressFlag(t *testing.T) {
	h := sim.New(sim.Options{})
	if _, err := h.CreateNetwork(context.Background(), &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge}); err != nil {
		t.Fatal(err)
	}
	self := remote.PeerNode{NodeInfo: remote.NodeInfo{Name: "n1", IPs: []string{"192.168.0.11"}}, HNS: h.Snapshot()}
	req := remote.TraceRequest{Src: "198.51.100.7:40000", Dst: "203.0.113.10:443", Protocol: "tcp"}
	_, err := trace(context.Background(), req, self)
	if err == nil || !strings.Contains(err.Error(), "--ingress") || strings.Contains(err.Error(), "Options.Ingress") {
		t.Fatalf("trace from outside with no --ingress: %v; want an error naming --ingress", err)
	}
	req.Ingress = "n1"
	if _, err := trace(context.Background(), req, self); err != nil {
		t.Fatalf("the same packet entering at n1: %v", err)
	}
}
