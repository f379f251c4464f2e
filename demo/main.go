//go:build linux

// Command demo is `make demo`: it builds and starts a real control plane and
// two simulated Windows nodes (hnssim, hnscni-wired pods, hnsproxy each),
// applies a few realistic Services, prints what hnsproxy programmed into
// each node's HNS and how packets fare, and runs until Ctrl-C (or exits at
// once with DEMO_ONESHOT=1).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// usage is what the demo says to -h, --help or any argument: it takes
// none, and the one setting it reads is DEMO_ONESHOT.
const usage = `Usage: make demo  (or hack/demo.sh)

Builds and starts a control plane on 127.0.0.1 and two simulated Windows
nodes (hnssim, hnscni-wired pods, hnsproxy each), applies a few Services,
prints what hnsproxy programmed into each node's HNS and how packets fare,
and runs until Ctrl-C. Takes no arguments.

Environment:
  DEMO_ONESHOT=1  print and exit, removing everything it started
`

func main() {
	if code, ok := argsExit(os.Args[1:]); !ok {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv("DEMO_ONESHOT") != ""); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// argsExit tells whether the demo may start with args: it takes none, so
// -h or --help asks for the usage (exit code 0), and anything else is a
// mistake (2) that must not start a control plane the caller did not want.
func argsExit(args []string) (code int, ok bool) {
	switch {
	case len(args) == 0:
		return 0, true
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
		return 0, false
	}
	return 2, false
}

func run(ctx context.Context, oneShot bool) (err error) {
	step("Building kube-apiserver and etcd (cached under _output/controlplane; a cold build takes minutes)")
	if _, err := framework.Binaries(); err != nil {
		return err
	}
	step("Building hnssim, hnscni, hnsproxy and host-local")
	if _, err := framework.Tools(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "hnsproxy-demo")
	if err != nil {
		return err
	}
	defer func() {
		if err == nil {
			err = os.RemoveAll(dir)
		} else {
			fmt.Fprintln(os.Stderr, "demo: logs kept in", dir)
		}
	}()
	step("Starting etcd and kube-apiserver on 127.0.0.1 (files in " + dir + ")")
	cp, err := framework.Start(ctx, filepath.Join(dir, "cp"), framework.Options{})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cp.Stop()) }()

	step("Starting two simulated Windows nodes on the overlay network vxlan0 (hnssim + hnsproxy each)")
	c, err := framework.StartCluster(ctx, cp, framework.DemoCluster, filepath.Join(dir, "n"))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, c.Stop()) }()

	step("Wiring pods with hnscni (through libcni and host-local, as containerd would)")
	deployed, err := framework.DeployDemo(ctx, c)
	if err != nil {
		return err
	}
	w := &workload{DemoWorkload: deployed, oneShot: oneShot}
	step("Waiting for hnsproxy to program HNS on both nodes")
	if err := w.WaitProgrammed(ctx, c); err != nil {
		return err
	}
	if err := w.print(ctx, os.Stdout, c, dir); err != nil {
		return err
	}
	if oneShot {
		return nil
	}
	fmt.Println("\nRunning; press Ctrl-C to stop everything the demo started.")
	<-ctx.Done()
	step("Stopping")
	return nil
}

func step(s string) { fmt.Fprintln(os.Stderr, "==> "+s) }
