// Command hnssim plays one Windows node's Host Networking Service: `serve`
// runs the simulator (sim) behind a unix socket (sim/remote), so
// that the real hnsproxy and hnscni binaries share it as they share HNS on
// Windows; the other subcommands are clients of a running server.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	var socket string
	root := &cobra.Command{
		Use:           "hnssim",
		Short:         "A simulated Windows HNS served on a unix socket",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.PersistentFlags().StringVar(&socket, "socket", "", "path of the server's unix socket (required)")
	_ = root.MarkPersistentFlagRequired("socket")
	root.AddCommand(
		newServeCommand(&socket),
		newCreateNamespaceCommand(&socket),
		newDeleteNamespaceCommand(&socket),
		newDumpCommand(&socket),
		newStatsCommand(&socket),
		newTraceCommand(&socket),
		newSetRemoteSubnetsCommand(&socket),
		newFaultsCommand(&socket),
		newEchoCommand(&socket),
	)
	return root
}

// printJSON writes v indented, for people and for jq.
func printJSON(cmd *cobra.Command, v any) error {
	b, err := jsonIndent(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), string(b))
	return err
}
