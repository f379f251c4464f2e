package main

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
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
	pkt, err := packet(req)
	if err != nil {
		return nil, err
	}
	v, err := cluster.Trace(pkt, vfp.Options{Ingress: req.Ingress})
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

// packet reads "IP[:PORT]" sources, "IP:PORT" destinations and a protocol name.
func packet(req remote.TraceRequest) (vfp.Packet, error) {
	var p vfp.Packet
	switch strings.ToLower(req.Protocol) {
	case "tcp", "":
		p.Protocol = hnslb.ProtocolTCP
	case "udp":
		p.Protocol = hnslb.ProtocolUDP
	case "icmp":
		p.Protocol = vfp.ProtocolICMP
	case "icmpv6":
		p.Protocol = vfp.ProtocolICMPv6
	default:
		return p, fmt.Errorf("protocol %q: want tcp, udp, icmp or icmpv6", req.Protocol)
	}
	var err error
	if p.Src, err = addrPort(req.Src); err != nil {
		return p, fmt.Errorf("source: %w", err)
	}
	if p.Dst, err = addrPort(req.Dst); err != nil {
		return p, fmt.Errorf("destination: %w", err)
	}
	return p, nil
}

// addrPort accepts "IP:PORT", "[IPv6]:PORT" or a bare address (port 0).
func addrPort(s string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, nil
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%q is not IP[:PORT]", s)
	}
	return netip.AddrPortFrom(a, 0), nil
}
