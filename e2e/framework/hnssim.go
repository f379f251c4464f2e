//go:build linux

package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
	"github.com/hnsproxy/hnsproxy/vfp"
)

const hnssimReadyWait = time.Minute

// HNSSim is one node's running `hnssim serve`: the simulated HNS that
// hnscni and hnsproxy share through a unix socket, as they share HNS on
// Windows.
type HNSSim struct {
	Name   string
	Socket string
	// Client talks to the server directly (what `hnssim dump|stats|trace`
	// do); the e2e helpers use it instead of parsing the CLI's JSON.
	Client *remote.Client
	proc   *process
}

// startHNSSim runs `hnssim serve` with args in dir and waits until it answers.
func startHNSSim(ctx context.Context, bin, dir, name string, args []string) (*HNSSim, error) {
	socket := filepath.Join(dir, "hns.sock")
	args = append([]string{"serve", "--socket", socket, "--node-name", name}, args...)
	p, err := startProcess("hnssim "+name, bin, args, nil, filepath.Join(dir, "hnssim.log"), false)
	if err != nil {
		return nil, err
	}
	s := &HNSSim{Name: name, Socket: socket, Client: remote.NewClient(socket), proc: p}
	readyCtx, cancel := context.WithTimeout(ctx, hnssimReadyWait)
	defer cancel()
	if err := p.waitReady(readyCtx, func(ctx context.Context) error {
		_, err := s.Client.Version(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	return s, nil
}

// Stop stops the server with SIGTERM.
func (s *HNSSim) Stop() error {
	s.Client.Close()
	return s.proc.stop(stopGrace)
}

// Dump is every network, endpoint, load balancer and namespace.
func (s *HNSSim) Dump(ctx context.Context) (*hnslb.Snapshot, error) { return s.Client.Dump(ctx) }

// Stats are the operation counters of the simulated HNS.
func (s *HNSSim) Stats(ctx context.Context) (sim.Counters, error) {
	var c sim.Counters
	raw, err := s.Client.Stats(ctx)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("hnssim %s stats: %w", s.Name, err)
	}
	return c, nil
}

// CreateNamespace creates an HNS namespace as a container runtime does
// for a pod sandbox and returns its GUID.
func (s *HNSSim) CreateNamespace(ctx context.Context) (string, error) {
	ns, err := s.Client.CreateNamespace(ctx, &hnslb.Namespace{Type: hnslb.NamespaceTypeHost, SchemaVersion: hnslb.V2})
	if err != nil {
		return "", err
	}
	return ns.ID, nil
}

// SetFaults replaces the injected faults (error rates, latency, a restart).
func (s *HNSSim) SetFaults(ctx context.Context, req remote.FaultsRequest) error {
	return s.Client.SetFaults(ctx, req)
}

// Flow is one packet to trace: Src is IP[:PORT], Dst IP:PORT, Protocol
// tcp, udp or icmp; Ingress names the node a packet from outside the
// cluster enters (empty: Src is a pod or node of the cluster).
type Flow struct {
	Src, Dst, Protocol, Ingress string
}

func (f Flow) String() string {
	s := fmt.Sprintf("%s -> %s/%s", f.Src, f.Dst, f.Protocol)
	if f.Ingress != "" {
		s += " entering at " + f.Ingress
	}
	return s
}

// Trace is the packet model's verdict over this node and peers.
type Trace struct {
	Outcome   string      `json:"outcome"`
	Delivered bool        `json:"delivered"`
	Summary   string      `json:"summary"`
	Verdict   vfp.Verdict `json:"verdict"`
}

// Trace asks this node's server to trace f over its own state and the
// peers' (as `hnssim trace --peer` does).
func (s *HNSSim) Trace(ctx context.Context, f Flow, peers ...*HNSSim) (Trace, error) {
	req := remote.TraceRequest{Src: f.Src, Dst: f.Dst, Protocol: f.Protocol, Ingress: f.Ingress}
	for _, p := range peers {
		peer, err := p.Client.Peer(ctx)
		if err != nil {
			return Trace{}, fmt.Errorf("peer %s: %w", p.Name, err)
		}
		peer.Name = p.Name
		req.Peers = append(req.Peers, peer)
	}
	raw, err := s.Client.Trace(ctx, req)
	if err != nil {
		return Trace{}, fmt.Errorf("trace %s: %w", f, err)
	}
	var t Trace
	if err := json.Unmarshal(raw, &t); err != nil {
		return Trace{}, fmt.Errorf("trace %s: %w", f, err)
	}
	return t, nil
}

// BridgeCalls are the raw calls the node's HCN bridge served, by function
// (HcnOpenLoadBalancer, HNSCall, ...); empty without a bridge.
func (s *HNSSim) BridgeCalls(ctx context.Context) (map[string]int, error) {
	var c struct{ BridgeCalls map[string]int }
	raw, err := s.Client.Stats(ctx)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("hnssim %s stats: %w", s.Name, err)
	}
	return c.BridgeCalls, nil
}
