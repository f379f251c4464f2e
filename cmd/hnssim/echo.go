package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// echoFlagHelp describes --echo and the echo subcommand's argument.
var echoFlagHelp = "how HNS answers, comma-separated and combinable (see docs/simulator.md, Echo profiles): " +
	strings.Join(sim.EchoNames(), ", ") + ", or all"

func newEchoCommand(socket *string) *cobra.Command {
	return clientCommand(socket, "echo OPTIONS", "Change how the served HNS answers: "+echoFlagHelp+`; "" for exact answers`, cobra.ExactArgs(1),
		func(ctx context.Context, _ *cobra.Command, c *remote.Client, args []string) error {
			return c.SetEcho(ctx, remote.EchoRequest{Echo: args[0]})
		})
}

// setEcho applies an echo request to the simulator and to the wire.
func (n *node) setEcho(req remote.EchoRequest) error {
	e, err := sim.ParseEcho(req.Echo)
	if err != nil {
		return err
	}
	n.hns.SetEcho(e)
	n.unknownFields.Store(e.UnknownFields)
	return nil
}
