// Command hnsproxy is a drop-in replacement for kube-proxy's Windows
// kernelspace mode that programs HNS load balancers. All logic lives in
// package app; this is only the entry point.
package main

import (
	"os"

	"k8s.io/component-base/cli"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app"
)

func main() {
	os.Exit(cli.Run(app.NewCommand()))
}
