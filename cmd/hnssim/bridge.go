package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// bridgeServer is the node's HCN bridge, if --bridge asked for one: the
// same simulated HNS served to Windows binaries under Wine.
type bridgeServer struct {
	b    *remote.Bridge
	addr net.Addr
}

// startBridge serves the bridge on addr until ctx ends, answering calls to
// a stopped HNS with downCodes in turn; an empty addr serves none (a nil
// *bridgeServer).
func startBridge(ctx context.Context, n *node, addr string, downCodes []string) (*bridgeServer, error) {
	if addr == "" {
		return nil, nil
	}
	b := remote.NewBridge(n.hns, n.hns.Snapshot)
	var codes []hnslb.ErrorCode
	for _, c := range downCodes {
		v, err := strconv.ParseUint(c, 0, 32)
		if err != nil {
			return nil, fmt.Errorf("--bridge-down-codes %q: %v", c, err)
		}
		codes = append(codes, hnslb.ErrorCode(v))
	}
	if err := b.AnswerDownWith(codes...); err != nil {
		return nil, fmt.Errorf("--bridge-down-codes: %w", err)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--bridge %s: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("--bridge %s: want a loopback address (the bridge has no authentication)", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--bridge: %w", err)
	}
	s := &bridgeServer{b: b, addr: l.Addr()}
	go func() {
		if err := s.b.Serve(ctx, l); err != nil {
			fmt.Fprintf(os.Stderr, "hnssim: the HCN bridge stopped: %v\n", err)
		}
	}()
	return s, nil
}

// bridgeStats are the simulator's counters (logical operations, as through
// the unix socket) and the raw calls the bridge served, by function.
type bridgeStats struct {
	sim.Counters
	BridgeCalls map[string]int `json:",omitempty"`
}

func (s *bridgeServer) stats(c sim.Counters) any {
	if s == nil {
		return c
	}
	return bridgeStats{Counters: c, BridgeCalls: s.b.Calls()}
}

func (s *bridgeServer) describe() string {
	if s == nil {
		return ""
	}
	return " and the HCN bridge on " + s.addr.String()
}
