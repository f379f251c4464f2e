package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// clientTimeout bounds one client subcommand.
const clientTimeout = 30 * time.Second

// clientCommand builds a subcommand that talks to the server on socket.
func clientCommand(socket *string, use, short string, args cobra.PositionalArgs,
	run func(ctx context.Context, cmd *cobra.Command, c *remote.Client, args []string) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), clientTimeout)
			defer cancel()
			c := remote.NewClient(*socket)
			defer c.Close()
			return run(ctx, cmd, c, args)
		},
	}
}

func newCreateNamespaceCommand(socket *string) *cobra.Command {
	return clientCommand(socket, "create-namespace", "Create an HNS namespace, as a container runtime does for a pod, and print its GUID", cobra.NoArgs,
		func(ctx context.Context, cmd *cobra.Command, c *remote.Client, _ []string) error {
			ns, err := c.CreateNamespace(ctx, &hnslb.Namespace{Type: hnslb.NamespaceTypeHost, SchemaVersion: hnslb.V2})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), ns.ID)
			return err
		})
}

func newDeleteNamespaceCommand(socket *string) *cobra.Command {
	return clientCommand(socket, "delete-namespace GUID", "Delete an HNS namespace, as a runtime does when a pod is gone", cobra.ExactArgs(1),
		func(ctx context.Context, _ *cobra.Command, c *remote.Client, args []string) error {
			return c.DeleteNamespace(ctx, args[0])
		})
}

func newDumpCommand(socket *string) *cobra.Command {
	return clientCommand(socket, "dump", "Print every network, endpoint, load balancer and namespace as JSON", cobra.NoArgs,
		func(ctx context.Context, cmd *cobra.Command, c *remote.Client, _ []string) error {
			s, err := c.Dump(ctx)
			if err != nil {
				return err
			}
			return printJSON(cmd, s)
		})
}

func newStatsCommand(socket *string) *cobra.Command {
	return clientCommand(socket, "stats", "Print the simulator's operation counters as JSON", cobra.NoArgs,
		func(ctx context.Context, cmd *cobra.Command, c *remote.Client, _ []string) error {
			s, err := c.Stats(ctx)
			if err != nil {
				return err
			}
			return printJSON(cmd, s)
		})
}

func newTraceCommand(socket *string) *cobra.Command {
	var src, dst, ingress string
	var peers []string
	cmd := clientCommand(socket, "trace", "Trace a packet through the node (and --peer nodes) and print the verdict as JSON", cobra.NoArgs,
		func(ctx context.Context, cmd *cobra.Command, c *remote.Client, _ []string) error {
			req := remote.TraceRequest{Src: src, Ingress: ingress}
			req.Dst, req.Protocol, _ = strings.Cut(dst, "/")
			for _, p := range peers {
				peer, err := fetchPeer(ctx, p)
				if err != nil {
					return err
				}
				req.Peers = append(req.Peers, peer)
			}
			v, err := c.Trace(ctx, req)
			if err != nil {
				return err
			}
			return printJSON(cmd, v)
		})
	fs := cmd.Flags()
	fs.StringVar(&src, "src", "", "source IP[:PORT]")
	fs.StringVar(&dst, "dst", "", "destination IP:PORT/PROTO ([IPv6]:PORT/PROTO; tcp, udp; IP/icmp, IPv6/icmpv6)")
	fs.StringVar(&ingress, "ingress", "", "node where a packet from outside the cluster enters")
	fs.StringSliceVar(&peers, "peer", nil, "[NAME=]SOCKET of another node's hnssim to include (repeatable)")
	_ = cmd.MarkFlagRequired("src")
	_ = cmd.MarkFlagRequired("dst")
	return cmd
}

// fetchPeer reads another server's node and state; NAME= overrides its name.
func fetchPeer(ctx context.Context, spec string) (remote.PeerNode, error) {
	name, socket, named := strings.Cut(spec, "=")
	if !named {
		socket = spec
	}
	c := remote.NewClient(socket)
	defer c.Close()
	peer, err := c.Peer(ctx)
	if err != nil {
		return peer, fmt.Errorf("peer %s: %w", spec, err)
	}
	if named {
		peer.Name = name
	}
	return peer, nil
}

func newSetRemoteSubnetsCommand(socket *string) *cobra.Command {
	var network string
	var vni uint16
	cmd := clientCommand(socket, "set-remote-subnets [CIDR=PA ...]", "Replace an overlay network's RemoteSubnetRoute policies, as Flannel does", cobra.ArbitraryArgs,
		func(ctx context.Context, _ *cobra.Command, c *remote.Client, args []string) error {
			routes, err := parseRemoteSubnets(args, vni)
			if err != nil {
				return err
			}
			return c.SetRemoteSubnets(ctx, remote.RemoteSubnetsRequest{Network: network, Routes: routes})
		})
	cmd.Flags().StringVar(&network, "network", "", "HNS network name")
	cmd.Flags().Uint16Var(&vni, "vni", defaultVNI, "VXLAN network id of the routes")
	_ = cmd.MarkFlagRequired("network")
	return cmd
}

func newFaultsCommand(socket *string) *cobra.Command {
	var f faultFlags
	var restart, latency time.Duration
	var restartLoses string
	cmd := clientCommand(socket, "faults", "Replace injected faults, set latency, or simulate an HNS restart", cobra.NoArgs,
		func(ctx context.Context, cmd *cobra.Command, c *remote.Client, _ []string) error {
			req, err := f.request()
			if err != nil {
				return err
			}
			req.Restart = remote.Duration(restart)
			req.RestartLoses = restartLoses
			if cmd.Flags().Changed("latency") {
				d := remote.Duration(latency)
				req.Latency = &d
			}
			return c.SetFaults(ctx, req)
		})
	f.addFlags(cmd.Flags())
	cmd.Flags().DurationVar(&restart, "restart", 0, "make every call fail as unavailable for this long")
	cmd.Flags().StringVar(&restartLoses, "restart-loses", "", fmt.Sprintf("what the restart drops: one of %q (empty: keep every object)", sim.RestartLosses[1:]))
	cmd.Flags().DurationVar(&latency, "latency", 0, "latency of one hcn RPC (a call waits it once per RPC it costs)")
	return cmd
}

func jsonIndent(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		var b bytes.Buffer
		err := json.Indent(&b, raw, "", "  ")
		return b.Bytes(), err
	}
	return json.MarshalIndent(v, "", "  ")
}
