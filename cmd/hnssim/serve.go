package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/internal/atomicfile"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

type serveOptions struct {
	profile  string
	seed     int64
	latency  time.Duration
	nodeName string
	nodeIPs  []string
	state    string
	echo     string
	bridge   string
	downCode []string
	writeLog string
	faults   faultFlags
	network  networkOptions
	variants variantFlags
}

func newServeCommand(socket *string) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve one simulated node's HNS on --socket until SIGTERM",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return serve(ctx, cmd, *socket, o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.profile, "profile", sim.ProfileWS2022, "Windows build to behave like: "+strings.Join(profileNames(), ", "))
	fs.Int64Var(&o.seed, "seed", 1, "seed for generated IDs and fault draws")
	fs.DurationVar(&o.latency, "latency", 0, "latency of one hcn RPC: every HNS call waits it once per RPC it costs through hcn")
	fs.StringVar(&o.nodeName, "node-name", "node", "the node's name (for traces)")
	fs.StringSliceVar(&o.nodeIPs, "node-ip", nil, "the node's host addresses (repeatable)")
	fs.StringVar(&o.state, "state", "", "load HNS objects from this file at start and save them there on stop, as HNS keeps them across restarts")
	fs.StringVar(&o.echo, "echo", "", echoFlagHelp)
	fs.StringVar(&o.bridge, "bridge", "", "also serve the HCN bridge (hack/wine's stand-ins for computenetwork.dll and vmcompute.dll) on this loopback TCP address, e.g. 127.0.0.1:7070")
	fs.StringSliceVar(&o.downCode, "bridge-down-codes", []string{"0x6ba"}, "Win32 codes the bridge answers calls to a stopped HNS with, in turn: 0x6ba, 0x6b5 (unknown on real HNS)")
	fs.StringVar(&o.writeLog, "write-log", "", "append a line to this file for every load balancer or endpoint HNS stores, keeps or drops, and for every write call's answer, to tell afterwards which call made an object")
	o.faults.addFlags(fs)
	o.network.addFlags(fs)
	o.variants.addFlags(fs)
	return cmd
}

func profileNames() []string {
	var names []string
	for _, p := range sim.Profiles() {
		names = append(names, p.Name)
	}
	return names
}

// node is the served node: the simulated HNS and what traces need to know.
type node struct {
	hns  *sim.HNS
	info remote.NodeInfo
	// unknownFields: answers on the wire carry fields hnslb does not know.
	unknownFields atomic.Bool
}

func serve(ctx context.Context, cmd *cobra.Command, socket string, o *serveOptions) error {
	profile, err := sim.ProfileByName(o.profile)
	if err != nil {
		return err
	}
	if o.latency < 0 || o.latency > remote.MaxFaultLatency {
		return fmt.Errorf("--latency %v: must be within 0..%v", o.latency, remote.MaxFaultLatency)
	}
	ips, err := parseAddrs(o.nodeIPs)
	if err != nil {
		return fmt.Errorf("--node-ip: %w", err)
	}
	variants, err := o.variants.variants()
	if err != nil {
		return err
	}
	opts := sim.Options{Profile: profile, Seed: o.seed, Latency: o.latency, Variants: variants}
	if o.writeLog != "" {
		f, err := os.OpenFile(o.writeLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("--write-log: %w", err)
		}
		defer f.Close()
		opts.WriteLog = f // unbuffered: a killed hnssim keeps its lines
	}
	n := &node{
		hns:  sim.New(opts),
		info: remote.NodeInfo{Name: o.nodeName, IPs: o.nodeIPs, NetworkName: o.network.name},
	}
	if err := loadState(n.hns, o.state); err != nil {
		return err
	}
	if o.network.name != "" {
		doc, pa, err := o.network.document(ips)
		if err != nil {
			return err
		}
		// A network restored from --state stays as it was.
		if _, err := n.hns.GetNetworkByName(ctx, o.network.name); hnslb.IsNotFound(err) {
			if _, err := n.hns.CreateNetwork(ctx, doc); err != nil {
				return fmt.Errorf("create network %s: %w", o.network.name, err)
			}
		}
		// The provider address is a host address of the node too.
		if pa.IsValid() && !containsAddr(ips, pa) {
			n.info.IPs = append(n.info.IPs, pa.String())
		}
		n.hns.ResetCounters()
	}
	faults, err := o.faults.request()
	if err != nil {
		return err
	}
	if err := n.setFaults(faults); err != nil {
		return err
	}
	if err := n.setEcho(remote.EchoRequest{Echo: o.echo}); err != nil {
		return fmt.Errorf("--echo: %w", err)
	}

	privateFiles()
	l, err := remote.Listen(socket)
	if err != nil {
		return err
	}
	bridge, err := startBridge(ctx, n, o.bridge, o.downCode)
	if err != nil {
		l.Close()
		return err
	}
	srv := &http.Server{
		Handler: remote.WithUnknownFields(remote.NewServer(n.hns, remote.Extras{
			Node:             n.info,
			Dump:             n.hns.Snapshot,
			LoadBalancersOn:  n.hns.LoadBalancersOn,
			Stats:            func() any { return bridge.stats(n.hns.Counters()) },
			Trace:            trace,
			SetFaults:        n.setFaults,
			SetRemoteSubnets: n.setRemoteSubnets,
			SetEcho:          n.setEcho,
			ApplyEndpointPolicies: func(req remote.EndpointPoliciesRequest) error {
				return n.hns.ApplyEndpointPoliciesOutOfBand(req.Endpoint, sim.PolicyApply(req.Apply), req.Policies)
			},
		}), n.unknownFields.Load),
		ReadHeaderTimeout: 10 * time.Second,
	}
	done := make(chan error, 1)
	go func() { done <- remote.Serve(srv, l) }()
	fmt.Fprintf(cmd.OutOrStdout(), "hnssim: node %s (HNS %s, profile %s) serving on %s%s\n",
		n.info.Name, profile.Version, profile.Name, socket, bridge.describe())

	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	// Closing the listener unlinks the socket; make sure even after a failed shutdown.
	if rmErr := os.Remove(socket); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) && err == nil {
		err = rmErr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, saveState(n.hns, o.state))
}

// loadState imports a saved state, if there is one.
func loadState(h *sim.HNS, path string) error {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return h.Import(data)
}

// saveState writes the state atomically and durably, so a crash or a power
// loss mid-write keeps the old one.
func saveState(h *sim.HNS, path string) error {
	if path == "" {
		return nil
	}
	data, err := h.Export()
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o600)
}

// setFaults applies a faults request to the simulator.
func (n *node) setFaults(req remote.FaultsRequest) error {
	known := map[sim.Op]bool{sim.AnyOp: true}
	for _, op := range sim.Ops() {
		known[op] = true
	}
	if err := req.Validate(); err != nil {
		return err
	}
	f := sim.Faults{ErrorRate: map[sim.Op]float64{}, Errors: req.Errors, Committed: req.Committed, KeptOnDelete: req.KeptOnDelete, KeptDeletes: req.KeptDeletes,
		PartialCreates: req.PartialCreates, PartialHoldsFrontend: req.PartialHoldsFrontend,
		ListedTwice: req.ListedTwice, LeftOutOfListings: req.LeftOutOfListings, LeftOutInARow: req.LeftOutInARow, GetsLeaveOut: req.GetsLeaveOut}
	for op, rate := range req.ErrorRate {
		if !known[sim.Op(op)] {
			return fmt.Errorf("unknown operation %q in error rates", op)
		}
		if rate < 0 || rate > 1 {
			return fmt.Errorf("error rate %v of %s: want 0..1", rate, op)
		}
		f.ErrorRate[sim.Op(op)] = rate
	}
	for _, hang := range []struct {
		names []string
		ops   *[]sim.Op
	}{{req.Hang, &f.Hang}, {req.HangReply, &f.HangReply}} {
		for _, op := range hang.names {
			if !known[sim.Op(op)] {
				return fmt.Errorf("unknown operation %q to hang", op)
			}
			*hang.ops = append(*hang.ops, sim.Op(op))
		}
	}
	if loss := sim.RestartLoss(req.RestartLoses); !slices.Contains(sim.RestartLosses, loss) {
		return fmt.Errorf("unknown restart loss %q: want one of %q", loss, sim.RestartLosses)
	}
	for _, p := range req.TakenPorts {
		taken, err := sim.ParseTakenPort(p)
		if err != nil {
			return err
		}
		f.TakenPorts = append(f.TakenPorts, taken)
	}
	for _, a := range req.ReservedAddresses {
		addr, err := netip.ParseAddr(a)
		if err != nil {
			return fmt.Errorf("reserved address %q: %v", a, err)
		}
		f.ReservedAddresses = append(f.ReservedAddresses, addr.Unmap())
	}
	n.hns.SetFaults(f)
	if req.Latency != nil {
		n.hns.SetLatency(time.Duration(*req.Latency))
	}
	if req.Restart > 0 {
		return n.hns.RestartLosing(time.Duration(req.Restart), sim.RestartLoss(req.RestartLoses))
	}
	return nil
}

// setRemoteSubnets replaces an overlay network's RemoteSubnetRoute policies,
// as Flannel does when nodes join or leave.
func (n *node) setRemoteSubnets(req remote.RemoteSubnetsRequest) error {
	for _, nw := range n.hns.Snapshot().Networks {
		if strings.EqualFold(nw.Name, req.Network) {
			if nw.Type != hnslb.NetworkTypeOverlay {
				return fmt.Errorf("network %q is %s; remote subnets are for overlay networks", nw.Name, nw.Type)
			}
			return n.hns.SetNetworkPolicies(nw.ID, withRemoteSubnets(nw.Policies, req.Routes))
		}
	}
	return hnslb.NewError("SetRemoteSubnets", hnslb.CodeNetworkNotFound, "network name %q", req.Network)
}

func parseAddrs(ss []string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range ss {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func containsAddr(as []netip.Addr, a netip.Addr) bool {
	for _, b := range as {
		if b == a {
			return true
		}
	}
	return false
}
