package app

import (
	"context"
	"net/netip"

	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/kubeapi"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/nodeconfig"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/proxier"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// runProxier is the seam between the daemon and the sync loop: it builds
// the reconciler and the proxier from cfg and deps and runs them until ctx
// ends. Everything around it is running when it is called: informer
// factories (the node one started), events, healthz and metrics servers,
// and HNS (network found, capabilities checked and logged).
func runProxier(ctx context.Context, cfg *options.Config, deps *Deps) error {
	logger := klog.FromContext(ctx)
	rec := reconciler.New(deps.HNS, reconciler.Options{
		NetworkID: deps.Network.ID,
		// A network gone or replaced ends the run: a start reads it again.
		NetworkName: deps.Network.Name,
		// Its HNS call deadlines (--hns-call-timeout, --hns-list-timeout) and
		// the calls abandoned at them are the start-up calls' (hnsCallOptions).
		StartupCalls: deps.StartupCalls,
		Features:     deps.Capabilities.Features,
		// --max-backends-per-lb wins: a cap the operator set is never lowered.
		LearnBackendCap: !deps.Capabilities.BackendCapFixed,
		// A learned cap is kept across restarts on this build only.
		OSBuild:   deps.Capabilities.OSBuild,
		StateFile: cfg.StateFile,
		Takeover:  cfg.Takeover,
		Logger:    logger.WithName("reconciler"),

		StateWriteFailed: stateWriteFailed(deps.Events),
		StateFileSynced:  stateFileSynced,
		Modify:           cfg.HNS.ModifyLoadBalancer,
		ModifyTurnedOff:  modifyTurnedOff,

		RemoteEndpointNames: remoteEndpointNames,
		DriftRepaired:       driftRepaired,
		DeleteKept:          deleteKept,
		LoadBalancerRefused: lbRefused,
	})
	if deps.Health != nil {
		deps.Health.SetHNSActivity(rec)
	}
	dcfg, err := desiredConfig(ctx, cfg, deps)
	if err != nil {
		return err
	}
	// On overlay every Node's pod CIDR is watched (trimmed to it), so a
	// node that joins has its route read (proxier/subnets.go).
	var clusterNodes informers.SharedInformerFactory
	if dcfg.Mode == desired.Overlay {
		clusterNodes = informers.NewSharedInformerFactoryWithOptions(deps.Kube, cfg.ConfigSyncPeriod, informers.WithTransform(proxier.TrimToRouting))
	}
	narrowServices, narrowSlices, err := kubeapi.ProxiedLists()
	if err != nil {
		return err
	}
	p, err := proxier.New(proxier.Options{
		NodeName:      cfg.NodeName,
		Config:        dcfg,
		MinSyncPeriod: cfg.MinSyncPeriod,
		SyncPeriod:    cfg.SyncPeriod,
		RepairPeriod:  cfg.DriftRepairPeriod,
		Reconciler:    rec,
		Recorder:      deps.Events.Recorder(),
		Observer:      deps.NewObserver(rec),
		RemoteSubnets: remoteSubnets(rec),
		ClusterNodes:  nodesOf(clusterNodes),
		// The CNI may make the root endpoint after the network.
		HealthCheckGateway: func(ctx context.Context) (map[intent.IPFamily]netip.Addr, error) {
			return nodeconfig.HealthCheckGateway(ctx, deps.StartupCalls, cfg.Winkernel.RootHNSEndpointName)
		},
		Kube:           deps.Kube,
		NarrowServices: narrowServices,
		NarrowSlices:   narrowSlices,
		ResyncPeriod:   cfg.ConfigSyncPeriod,
	}, deps.NodeInformers)
	if err != nil {
		return err
	}
	deps.Events.ResolveServiceUIDs(p.ServiceUID)
	deps.NodeInformers.Start(ctx.Done())
	if clusterNodes != nil {
		clusterNodes.Start(ctx.Done())
	}
	if deps.Metrics != nil {
		deps.Metrics.SetDebugSource(debugSource(cfg, deps, rec))
	}
	return p.Run(ctx)
}

// desiredConfig is the node-independent part of the mapping's input (see
// nodeconfig.Desired).
func desiredConfig(ctx context.Context, cfg *options.Config, deps *Deps) (desired.Config, error) {
	return nodeconfig.Desired(ctx, cfg, deps.StartupCalls, deps.Network, deps.Capabilities, realHNS(cfg.HNS))
}

// realHNS says the HNS is the host's, not a simulator: the host's
// interfaces then carry the overlay provider address.
func realHNS(h options.HNS) bool { return !h.IsSim() && !isUnix(h) }

// nodesOf is the Node informer of factory, nil without one.
func nodesOf(factory informers.SharedInformerFactory) coreinformers.NodeInformer {
	if factory == nil {
		return nil
	}
	return factory.Core().V1().Nodes()
}

// remoteSubnets re-reads the overlay network's RemoteSubnetRoute policies,
// through the reconciler, so the read has an HNS call deadline.
func remoteSubnets(rec *reconciler.Reconciler) func(context.Context) ([]desired.RemoteSubnet, error) {
	return func(ctx context.Context) ([]desired.RemoteSubnet, error) {
		n, err := rec.Network(ctx)
		if err != nil {
			return nil, err
		}
		return desired.RemoteSubnetsOf(n), nil
	}
}

// hnsCallOptions are cfg's HNS call deadlines, for the start-up calls;
// the reconciler takes them over with those calls.
func hnsCallOptions(ctx context.Context, cfg *options.Config) reconciler.Options {
	return reconciler.Options{
		CallTimeout:  cfg.HNS.CallTimeout,
		ListTimeout:  cfg.HNS.ListTimeout,
		CallTimedOut: hnsCallTimedOut,
		Logger:       klog.FromContext(ctx).WithName("hns"),
	}
}

// hnsCallTimedOut counts an HNS call abandoned at its deadline.
func hnsCallTimedOut(op string) { metrics.HNSCallTimeoutsTotal.WithLabelValues(op).Inc() }
