// Package optionstest completes hnsproxy's command line as the command
// does, for the tests of packages that take a resolved configuration (the
// daemon, nodeconfig, the deploy manifests).
package optionstest

import (
	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

// Complete parses args with every flag hnsproxy takes and completes them:
// the configuration a start would run with and its warnings, or the error
// it would end on (a flag the command refuses too).
func Complete(args ...string) (*options.Config, []string, error) {
	o := options.NewOptions()
	var fss cliflag.NamedFlagSets
	o.AddFlags(&fss)
	fs := pflag.NewFlagSet("hnsproxy", pflag.ContinueOnError)
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	return o.Complete(fs)
}
