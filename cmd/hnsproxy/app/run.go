package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/nodeconfig"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/healthcheck"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/proxier"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// Deps is everything Run has built and started when it hands over to runProxier.
type Deps struct {
	Kube kubernetes.Interface
	// NodeInformers serves this node only and is already started (healthz
	// reads it); runProxier passes it to proxier.New. The proxier watches
	// Services and EndpointSlices on informers of its own.
	NodeInformers informers.SharedInformerFactory

	// HNS is the selected HNS client, instrumented for metrics.
	HNS hnslb.Client
	// StartupCalls are HNS's start-up calls, each with the call deadline;
	// the reconciler takes them over (reconciler.Options.StartupCalls).
	StartupCalls *reconciler.StartupCalls
	// Network is the HNS network named by --network-name / KUBE_NETWORK.
	Network *hnslb.Network
	// Capabilities are the HNS features hnsproxy uses (DSR effective, backend cap).
	Capabilities Capabilities

	// Events reports node events; Events.Recorder() is the recorder for the proxier.
	Events *events.Reporter
	// Health and ServiceHealth are nil when --healthz-bind-address is empty.
	Health        *healthcheck.ProxyHealthServer
	ServiceHealth *healthcheck.ServiceHealthServer
	// Metrics is nil when --metrics-bind-address is empty; runProxier
	// installs the /debug/hns source on it.
	Metrics *metrics.Server
	// NewObserver adapts the proxier's reports to metrics and health;
	// statuses (the reconciler) feeds hnsproxy_objects and may be nil.
	NewObserver func(statuses StatusSource) proxier.Observer
}

// networkPoll and networkLogEvery pace the wait for the HNS network.
const (
	networkPoll     = time.Second
	networkLogEvery = 10 * time.Second
	serverRetry     = 5 * time.Second
)

// Run starts everything around the proxier, checks HNS, and runs the
// proxier until ctx ends or a fatal error.
func Run(ctx context.Context, cfg *options.Config) error {
	if floor := startHeapFloor(ctx, cfg.HeapFloor, os.Getenv); floor != nil {
		defer floor.Stop()
	}
	kube, err := newKubeClient(cfg)
	if err != nil {
		return err
	}
	return run(ctx, cfg, kube, nil)
}

// run is Run with the API client given, and optionally the HNS client
// (nil: the one cfg selects); tests pass a fake clientset and a simulator.
func run(ctx context.Context, cfg *options.Config, kube kubernetes.Interface, hns hnslb.Client) error {
	logger := klog.FromContext(ctx)
	info := Version()
	logger.Info("Starting hnsproxy", "version", info.GitVersion, "kubeProxyCompat", kubeProxyCompat, "go", info.GoVersion, "platform", info.Platform, "node", cfg.NodeName)
	lock, err := lockState(ctx, logger, cfg.StateFile, stateLockWait)
	if err != nil {
		return err
	}
	defer lock.Release()
	metrics.Register()
	metrics.RegisterFeatureGates(cfg.FeatureGates)
	metrics.BuildInfo.WithLabelValues(info.GitVersion).Set(1)

	nodeFactory := newNodeInformers(kube, cfg)
	nodes := nodeSource{name: cfg.NodeName, lister: nodeFactory.Core().V1().Nodes().Lister()}
	nodeFactory.Start(ctx.Done())

	broadcaster := events.NewBroadcaster(kube)
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		return fmt.Errorf("starting events: %w", err)
	}
	defer broadcaster.Shutdown()
	reporter := events.NewReporter(broadcaster, cfg.NodeName)

	deps := &Deps{Kube: kube, NodeInformers: nodeFactory, Events: reporter}
	fatal := make(chan error, 3)
	if cfg.HealthzBindAddress != "" {
		deps.Health = healthcheck.NewProxyHealthServer(clock.RealClock{}, 2*cfg.SyncPeriod, nodes)
		serve(ctx, "healthz", cfg.HealthzBindAddress, cfg.BindAddressHardFail, fatal, func(ctx context.Context, ln net.Listener) error {
			return deps.Health.Serve(ctx, ln)
		}, func(err error) { reporter.ServerFailed(events.ReasonFailedToStartProxierHealthcheck, err) })
	}
	if cfg.MetricsBindAddress != "" {
		deps.Metrics = metrics.NewServer(metrics.ServerOptions{
			ProxyMode:       string(options.ProxyModeKernelspace),
			EnableProfiling: cfg.EnableProfiling,
			EnableDebug:     cfg.DebugEndpoint,
			Configz:         cfg.Source,
		})
		serve(ctx, "metrics", cfg.MetricsBindAddress, cfg.BindAddressHardFail, fatal, deps.Metrics.Serve,
			func(err error) { reporter.ServerFailed(events.ReasonFailedToStartMetricServer, err) })
	}
	deps.NewObserver = func(statuses StatusSource) proxier.Observer {
		return newObserver(cfg.ClusterCIDRs, deps.Health, deps.ServiceHealth, statuses, reporter)
	}

	if cfg.ConfigFile != "" {
		// Watched from before the wait for HNS and its network: an edit
		// that fixes the network's name restarts hnsproxy at once, not
		// when --hns-network-timeout ends the wait.
		watchCtx, stopWatch := context.WithCancel(ctx)
		watched := make(chan struct{})
		// Ended before the event broadcaster is shut down: no report after it.
		defer func() { stopWatch(); <-watched }()
		w := newConfigWatcher(cfg.ConfigFile, cfg.ConfigFileContent, cfg.Recomplete, func(err error) {
			// The gauge first: whoever sees the event (a test polling
			// for it) finds the gauge set too.
			metrics.ConfigFileRejected.Set(1)
			logger.Error(err, "The configuration file changed to one hnsproxy would not start with; running on with the configuration it started with", "file", cfg.ConfigFile)
			reporter.ConfigFileRejected(cfg.ConfigFile, err)
		})
		// The event expires; the gauge holds while a restart would fail.
		metrics.ConfigFileRejected.Set(0)
		w.cleared = func() {
			logger.Info("The configuration file holds the configuration hnsproxy runs with again", "file", cfg.ConfigFile)
			metrics.ConfigFileRejected.Set(0)
		}
		go func() {
			defer close(watched)
			watchConfigFile(watchCtx, w, fatal)
		}()
	}
	// The wait for the HNS network too ends on a fatal error: a server
	// that cannot listen under --bind-address-hard-fail, or a changed
	// config file, stops hnsproxy at once, not --hns-network-timeout later.
	return runUntilFatal(ctx, fatal, func(ctx context.Context) error {
		if err := connectHNS(ctx, cfg, deps, hns); err != nil {
			return err
		}
		if deps.Health != nil {
			// Where they listen depends on the families HNS serves.
			deps.ServiceHealth = healthcheck.NewServiceHealthServer(cfg.NodeName, reporter.Recorder(),
				healthCheckListenIPs(cfg.ClusterCIDRs, servesIPv6(deps.Capabilities, deps.Network)), deps.Health)
			defer deps.ServiceHealth.Close()
		}
		reporter.Starting()
		return runProxier(ctx, cfg, deps)
	})
}

// runUntilFatal runs the proxier (and what starts it: the wait for HNS)
// until it returns or an error arrives on fatal. A fatal error stops the proxier first and waits for it, as a stop
// does: the sync loop ends and makes its last state file write before the
// deferred clean-up (the state file's lock last) and the process's exit,
// rather than exiting beside a Sync that still writes HNS.
func runUntilFatal(ctx context.Context, fatal <-chan error, proxy func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- proxy(ctx) }()
	select {
	case err := <-done:
		return err
	case err := <-fatal:
		klog.FromContext(ctx).Error(err, "Stopping the proxier on a fatal error")
		cancel()
		if perr := <-done; perr != nil && !errors.Is(perr, context.Canceled) {
			klog.FromContext(ctx).Error(perr, "The proxier stopped with an error too")
		}
		return err
	}
}

// connectHNS selects the HNS client, waits for the network and checks
// capabilities. Every call it makes has the call deadline
// (--hns-call-timeout): under a hung HNS the wait for the network fails at
// --hns-network-timeout, as it does when the network never appears.
func connectHNS(ctx context.Context, cfg *options.Config, deps *Deps, raw hnslb.Client) error {
	var err error
	if raw == nil {
		if raw, err = newHNSClient(cfg.HNS); err != nil {
			return err
		}
	}
	deps.HNS = metrics.InstrumentClient(raw)
	if cfg.HNS.IsSim() {
		if err := seedSimNetwork(ctx, deps.HNS, cfg.Winkernel); err != nil {
			return err
		}
	}
	deps.StartupCalls = reconciler.NewStartupCalls(deps.HNS, hnsCallOptions(ctx, cfg))
	deps.Network, err = waitForNetwork(ctx, deps.StartupCalls, cfg.Winkernel.NetworkName, networkPoll, networkLogEvery, cfg.HNS.NetworkWaitTimeout,
		func(n *hnslb.Network) error { return nodeconfig.Usable(n, realHNS(cfg.HNS)) })
	if err != nil {
		return err
	}
	if err := ensureSourceVIP(ctx, cfg, deps.Network); err != nil {
		return err
	}
	deps.Capabilities, err = checkCapabilities(ctx, deps.StartupCalls, cfg, deps.Network, capabilityEvents{deps.Events.FeatureUnavailable, deps.Events.OSBugWorkaround})
	return err
}

// serve runs a server in the background like kube-proxy does: on failure
// it reports, then retries every few seconds, or with hardFail sends the
// error to fatal and stops.
func serve(ctx context.Context, name, addr string, hardFail bool, fatal chan<- error, run func(context.Context, net.Listener) error, report func(error)) {
	logger := klog.FromContext(ctx)
	go func() {
		for {
			ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
			if err == nil {
				err = run(ctx, ln)
			}
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				err = errors.New("server returned without error")
			}
			logger.Error(err, "Server failed", "server", name, "address", addr)
			report(err)
			if hardFail {
				fatal <- fmt.Errorf("%s server on %s: %w", name, addr, err)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(serverRetry):
			}
		}
	}()
}

// healthCheckListenIPs are the any-addresses where the per-Service health
// checks listen: those of the cluster's IP families (--cluster-cidr, IPv4
// when it is empty), and :: too where hnsproxy serves IPv6 Services
// (servesIPv6). kube-proxy runs dual-stack, with health checks on 0.0.0.0
// and ::, on the condition hnsproxy serves IPv6 on, without reading
// --cluster-cidr.
func healthCheckListenIPs(clusterCIDRs []string, servesIPv6 bool) []string {
	families := familiesOf(clusterCIDRs)
	if servesIPv6 {
		families = append(families, v1.IPv6Protocol)
	}
	var out []string
	if slices.Contains(families, v1.IPv4Protocol) {
		out = append(out, "0.0.0.0")
	}
	if slices.Contains(families, v1.IPv6Protocol) {
		out = append(out, "::")
	}
	return out
}

// servesIPv6 says whether hnsproxy may serve IPv6 Services on this node:
// HNS supports IPv6 dual stack on a network that is not overlay
// (proxier/desired familyUnsupported; kube-proxy's DualStackCompatible),
// and the host can listen on :: at all (a host without IPv6 would
// otherwise fail every health-check port).
func servesIPv6(caps Capabilities, network *hnslb.Network) bool {
	if !caps.Features.IPv6DualStack || network.Type == hnslb.NetworkTypeOverlay {
		return false
	}
	ln, err := net.Listen("tcp6", "[::]:0")
	if err != nil {
		klog.InfoS("This host cannot listen on IPv6; health-check node ports listen on IPv4 only", "err", err)
		return false
	}
	_ = ln.Close()
	return true
}
