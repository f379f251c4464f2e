package app

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	clientfeatures "k8s.io/client-go/features"
	cliflag "k8s.io/component-base/cli/flag"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	"k8s.io/kube-proxy/config/v1alpha1"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

// NewCommand returns the hnsproxy command.
func NewCommand() *cobra.Command {
	opts := options.NewOptions()
	var fss cliflag.NamedFlagSets
	opts.AddFlags(&fss)
	var showVersion versionFlag = "false"
	global := fss.FlagSet("global")
	global.Var(&showVersion, "version", "--version, --version=raw prints version information and quits")
	global.Lookup("version").NoOptDefVal = "true"

	cmd := &cobra.Command{
		Use:   "hnsproxy",
		Short: "A kube-proxy replacement for Windows nodes that programs HNS load balancers",
		Long: `hnsproxy runs on each Windows node in place of kube-proxy's kernelspace mode.
It watches Services, EndpointSlices and its Node and programs the Host
Networking Service (HNS) load balancers that implement them: incrementally,
with per-object retries, drift repair, and adoption of its own objects
across restarts. It takes kube-proxy's flags and configuration file.`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion.print(cmd.OutOrStdout()) {
				return nil
			}
			start := func(ctx context.Context) error {
				run, err := prepare(cmd, opts)
				if err != nil || run == nil {
					return err
				}
				return run(ctx)
			}
			// As kube-proxy (server.go's RunE: initForOS, then Complete),
			// a service reports to the SCM before the configuration is
			// read: a configuration that fails is then a failure of the
			// service, which the SCM's recovery action restarts, not a
			// process that ended before it reported at all.
			if opts.WindowsService() {
				return runAsService(start)
			}
			return runUntilSignalled(start)
		},
		Args: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a != "" {
					return fmt.Errorf("%q does not take any arguments, got %q", cmd.CommandPath(), args)
				}
			}
			return nil
		},
	}
	fs := cmd.Flags()
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
	cliflag.SetUsageAndHelpFunc(cmd, fss, 0)
	_ = cmd.MarkFlagFilename("config", "yaml", "yml", "json", "conf")
	return cmd
}

// prepare completes the configuration and sets up logging, and returns
// what to run: the daemon or --cleanup, nil after --write-config-to.
func prepare(cmd *cobra.Command, opts *options.Options) (func(context.Context) error, error) {
	cfg, warnings, err := opts.Complete(cmd.Flags())
	if err != nil {
		logWarnings(warnings) // in klog's text: logging is not set up
		return nil, err
	}
	// client-go reads its gates (WatchListClient...) from
	// --feature-gates from here on, as in kube-proxy; nothing has
	// made a client yet.
	clientfeatures.ReplaceFeatureGates(options.ClientGates(cfg.FeatureGates))
	if cfg.WriteConfigTo != "" {
		logWarnings(warnings)
		return nil, writeConfig(cfg.Source, cfg.WriteConfigTo)
	}
	// The daemon's warnings in its log format: a text line among
	// --logging-format=json's would break a pipeline parsing JSON.
	if err := logsapi.ValidateAndApply(&cfg.Logging, cfg.FeatureGates); err != nil {
		logWarnings(warnings)
		return nil, fmt.Errorf("initializing logging: %w", err)
	}
	logWarnings(warnings)
	cliflag.PrintFlags(cmd.Flags())
	if cfg.Cleanup {
		return func(ctx context.Context) error { return runCleanup(ctx, cfg, nil) }, nil
	}
	return func(ctx context.Context) error { return Run(ctx, cfg) }, nil
}

// runAsService runs the daemon under the Windows Service Control Manager
// (runAsWindowsService); a variable so that tests can play the SCM.
var runAsService = runAsWindowsService

// logWarnings logs what the configuration's completion warned about.
func logWarnings(warnings []string) {
	for _, w := range warnings {
		klog.Warning(w)
	}
}

// writeConfig is --write-config-to: kube-proxy writes the configuration it
// completed (file or flags, defaults and --hostname-override applied).
func writeConfig(kp *v1alpha1.KubeProxyConfiguration, path string) error {
	data, err := options.EncodeConfig(kp)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	klog.InfoS("Wrote configuration", "file", path)
	return nil
}
