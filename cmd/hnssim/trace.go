package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/hnsproxy/hnsproxy/sim/remote"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// traceReply is the verdict with its outcome spelled out.
type traceReply struct {
	Outcome   string      `json:"outcome"`
	Delivered bool        `json:"delivered"`
	Summary   string      `json:"summary"`
	Verdict   vfp.Verdict `json:"verdict"`
}

// trace runs the packet model over the served node and the request's peers.
func trace(_ context.Context, req remote.TraceRequest, self remote.PeerNode) (any, error) {
	nodes := []vfp.Node{}
	for _, p := range append([]remote.PeerNode{self}, req.Peers...) {
		n, err := vfpNode(p)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	cluster, err := vfp.NewCluster(nodes...)
	if err != nil {
		return nil, err
	}
	pkt, err := vfp.ParsePacket(req.Src, req.Dst, req.Protocol)
	if err != nil {
		return nil, err
	}
	v, err := cluster.Trace(pkt, vfp.Options{Ingress: req.Ingress})
	if errors.Is(err, vfp.ErrNoIngress) {
		return nil, fmt.Errorf("packet %s %w: give --ingress NODE, the node it enters at", pkt, vfp.ErrNoIngress)
	}
	if err != nil {
		return nil, err
	}
	return traceReply{Outcome: v.Outcome.String(), Delivered: v.Delivered(), Summary: v.String(), Verdict: v}, nil
}

func vfpNode(p remote.PeerNode) (vfp.Node, error) {
	ips, err := parseAddrs(p.IPs)
	if err != nil {
		return vfp.Node{}, fmt.Errorf("node %s: %w", p.Name, err)
	}
	return vfp.Node{Name: p.Name, IPs: ips, HNS: p.HNS, NetworkName: p.NetworkName}, nil
}
