// Command hnsproxy-diag answers "why does my Service not work on this
// Windows node?". It reads the node's HNS (never writing it) and the
// Kubernetes objects, and shows each Service port's HNS load balancers
// against what hnsproxy would program (`hnsproxy-diag`, the default), or
// traces a packet through the node's HNS state (`hnsproxy-diag trace`).
// It takes hnsproxy's own flags and --config, so it sees the node as the
// daemon does. Named apart from Microsoft's hnsdiag, which lists HNS
// objects without their Kubernetes meaning.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy-diag/diag"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/kubeapi"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/nodeconfig"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// readTimeout bounds reading HNS and the API server.
const readTimeout = time.Minute

// exitDifferences is the exit status when the node's HNS is not as
// hnsproxy would program it; 1 is an error (nothing was diagnosed).
const exitDifferences = 2

func main() { os.Exit(exitCode(newCommand().Execute())) }

// exitCode is 0 when the diagnosis (or trace) ran and found nothing for
// hnsproxy to correct, exitDifferences when it found some, else 1.
func exitCode(err error) int {
	var d differences
	switch {
	case err == nil:
		return 0
	case errors.As(err, &d):
		return exitDifferences
	}
	return 1
}

// differences is the error of a diagnosis whose table has rows hnsproxy
// would correct (diag.Report.ToCorrect): the table is written, and scripts
// see a nonzero exit.
type differences int

func (d differences) Error() string {
	return fmt.Sprintf("%d load balancers are not as hnsproxy would program them (state missing, differs, or extra and not foreign)", int(d))
}

func newCommand() *cobra.Command {
	opts := options.NewOptions()
	var output string
	root := &cobra.Command{
		Use:   "hnsproxy-diag",
		Short: "Show this node's HNS load balancers per Service port against what hnsproxy would program",
		Long: "Reads this Windows node's HNS (read-only) and the Kubernetes objects, and lists each Service port's HNS load balancers " +
			"(flags, backends by pod and node, hnsproxy's or foreign) and what is missing or extra compared with what hnsproxy would program. " +
			"Give it hnsproxy's own flags or --config.",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: false,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			in, err := read(cmd, opts)
			if err != nil {
				return err
			}
			r := diag.Diagnose(in)
			if err := write(cmd.OutOrStdout(), output, r, r.WriteTable); err != nil {
				return err
			}
			if n := r.ToCorrect(); n > 0 {
				return differences(n)
			}
			return nil
		},
	}
	fss := cliflag.NamedFlagSets{}
	opts.AddFlags(&fss)
	for _, name := range fss.Order {
		root.PersistentFlags().AddFlagSet(fss.FlagSets[name])
	}
	root.PersistentFlags().StringVarP(&output, "output", "o", "table", "table or json")
	root.AddCommand(newTraceCommand(opts, &output))
	return root
}

func newTraceCommand(opts *options.Options, output *string) *cobra.Command {
	var src, dst string
	cmd := &cobra.Command{
		Use:   "trace --src IP[:PORT] --dst IP:PORT/PROTO",
		Short: "Trace a packet through this node's HNS state with the VFP model",
		Long: "Traces the first packet of a flow through this node's HNS state: the load balancer matched, the backend chosen, " +
			"the addresses the backend sees, the encapsulation, or where and why it is dropped. A source outside the node enters here; " +
			"a packet for another node is followed to it and handed off.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			addr, proto, _ := strings.Cut(dst, "/")
			p, err := vfp.ParsePacket(src, addr, proto)
			if err != nil {
				return err
			}
			if err := checkOutput(*output); err != nil {
				return err
			}
			in, err := read(cmd, opts)
			if err != nil {
				return err
			}
			t, err := diag.Trace(in, p)
			if err != nil {
				return err
			}
			return write(cmd.OutOrStdout(), *output, t, t.WriteText)
		},
	}
	cmd.Flags().StringVar(&src, "src", "", "source IP[:PORT]: a pod or the host of this node, or a client outside it")
	cmd.Flags().StringVar(&dst, "dst", "", "destination IP:PORT/PROTO ([IPv6]:PORT/PROTO; tcp, udp; IP/icmp, IPv6/icmpv6)")
	_ = cmd.MarkFlagRequired("src")
	_ = cmd.MarkFlagRequired("dst")
	return cmd
}

// read resolves hnsproxy's configuration from the flags and reads HNS and
// the Kubernetes objects.
func read(cmd *cobra.Command, opts *options.Options) (*diag.Inputs, error) {
	cfg, warnings, err := opts.Complete(cmd.Flags())
	for _, w := range warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "hnsproxy-diag: warning:", w)
	}
	if err != nil {
		return nil, err
	}
	// client-go reads its gates from --feature-gates, as in the daemon
	// (cmd/hnsproxy/app/command.go); nothing has made a client yet.
	clientfeatures.ReplaceFeatureGates(options.ClientGates(cfg.FeatureGates))
	hns, closeHNS, err := openHNS(cfg.HNS)
	if err != nil {
		return nil, err
	}
	defer closeHNS()
	rc, err := restConfig(cfg, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes client: %w", err)
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes client: %w", err)
	}
	return diag.ReadWithin(cmd.Context(), readTimeout, diag.Source{
		HNS: hns, Kube: kube, NetworkName: cfg.Winkernel.NetworkName, StateFile: cfg.StateFile,
		Config: func(ctx context.Context, network *hnslb.Network, v hnslb.Version) (desired.Config, nodeconfig.Capabilities, error) {
			caps := nodeconfig.CapabilitiesOf(v, osBuildOf(ctx, hns), network, cfg)
			c, err := nodeconfig.Desired(ctx, cfg, hns, network, caps, realHNS)
			if network.Type == hnslb.NetworkTypeOverlay {
				c.RemoteSubnets = desired.NewRemoteSubnetIndex(desired.RemoteSubnetsOf(network))
			}
			return c, caps, err
		},
	})
}

// restConfig is the API client configuration, built as the daemon builds
// its own: in the hnsproxy pod the kubeconfig names its CA and token below
// %CONTAINER_SANDBOX_MOUNT_POINT%, which clientcmd alone cannot find.
func restConfig(cfg *options.Config, getenv func(string) string) (*rest.Config, error) {
	rc, err := kubeapi.RestConfig(cfg, "hnsproxy-diag", getenv)
	if err != nil && cfg.Kubeconfig == "" && cfg.Master == "" {
		// Only the pod has the in-cluster configuration; on the host the
		// operator must name a kubeconfig.
		return nil, fmt.Errorf("%w: outside the hnsproxy pod, give --kubeconfig (or a --config whose clientConnection.kubeconfig names one)", err)
	}
	return rc, err
}

// checkOutput refuses an --output write cannot give, before anything is
// read: reading a node whose HNS hangs takes minutes.
func checkOutput(output string) error {
	switch output {
	case "table", "text", "", "json":
		return nil
	}
	return fmt.Errorf("--output %q: want table or json", output)
}

// write prints v as JSON or with its text form.
func write(w io.Writer, output string, v any, text func(io.Writer) error) error {
	if err := checkOutput(output); err != nil {
		return err
	}
	if output != "json" {
		return text(w)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// osBuildOf is the node's Windows build, zero (unknown) when it cannot be
// read: the diagnosis then assumes the HNS version's backend cap and no OS
// bug workaround, and says nothing is certain about either.
func osBuildOf(ctx context.Context, r hnslb.Reader) hnslb.OSBuild {
	b, _ := r.OSBuild(ctx)
	return b
}
