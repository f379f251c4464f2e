//go:build linux

// Command controlplane starts, inspects and stops a detached e2e control
// plane (etcd and kube-apiserver on 127.0.0.1) in a directory; it is the
// engine behind hack/controlplane.sh.
//
//	controlplane [--bin-dir DIR] start DIR
//	controlplane env DIR
//	controlplane restart-apiserver DIR
//	controlplane stop DIR
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "controlplane:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("controlplane", flag.ContinueOnError)
	binDir := fs.String("bin-dir", "", "folder with kube-apiserver and etcd (default: build or reuse them with hack/build-controlplane.sh)")
	serviceCIDRs := fs.String("service-cidrs", strings.Join(framework.DefaultServiceCIDRs, ","), "Service ClusterIP ranges, primary family first")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: controlplane [flags] start|env|restart-apiserver|stop DIR")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return fmt.Errorf("want a command and a directory, got %q", fs.Args())
	}
	verb, dir := fs.Arg(0), fs.Arg(1)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if verb == "start" {
		cp, err := framework.Start(ctx, dir, framework.Options{
			BinDir:       *binDir,
			ServiceCIDRs: strings.Split(*serviceCIDRs, ","),
			Detach:       true,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "controlplane: kube-apiserver ready at %s (logs and kubeconfigs in %s)\n", cp.APIServerURL(), cp.Dir())
		printEnv(cp)
		return nil
	}

	cp, err := framework.Open(dir)
	if err != nil {
		return err
	}
	switch verb {
	case "env":
		printEnv(cp)
		return nil
	case "restart-apiserver":
		return cp.RestartAPIServer(ctx)
	case "stop":
		return cp.Stop()
	default:
		fs.Usage()
		return fmt.Errorf("unknown command %q", verb)
	}
}

// printEnv writes the control plane as `export` lines for the shell's eval.
func printEnv(cp *framework.ControlPlane) {
	for _, kv := range cp.Env() {
		name, value, _ := strings.Cut(kv, "=")
		fmt.Printf("export %s='%s'\n", name, strings.ReplaceAll(value, "'", `'\''`))
	}
}
