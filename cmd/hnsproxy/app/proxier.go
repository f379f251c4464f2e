package app

import (
	"context"
	"errors"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

// errProxierNotWired is what the daemon says until runProxier is wired.
var errProxierNotWired = errors.New("hnsproxy: the proxier is not wired into the daemon yet (cmd/hnsproxy/app/proxier.go)")

// runProxier is THE SEAM: build the reconciler and the proxier from cfg and
// deps, and run them until ctx ends. Everything around it is running when it
// is called: informer factories (node one started), events, healthz and
// metrics servers, and HNS (network found, capabilities checked and logged).
// To wire it:
//
//  1. rec := reconciler.New(deps.HNS, reconciler.Options{NetworkID:
//     deps.Network.ID, Features: deps.Capabilities.Features, StateFile:
//     cfg.StateFile}).
//  2. desired.Config: NodeName cfg.NodeName; Mode from deps.Network.Type
//     (Overlay → desired.Overlay, else L2Bridge); SourceVIP from
//     cfg.Winkernel.SourceVIP by family; EnableDSR deps.Capabilities.DSR;
//     ForwardHealthCheckVIP cfg.Winkernel.ForwardHealthCheckVIP;
//     HealthzPort the port of cfg.HealthzBindAddress; HealthCheckGateway
//     the IP of HNS endpoint cfg.Winkernel.RootHNSEndpointName;
//     MaxBackends deps.Capabilities.Features.MaxBackends; Features
//     deps.Capabilities.Features; HostMAC (overlay) the MAC of the node-IP
//     interface; RemoteSubnets from deps.Network.RemoteSubnetRoutes().
//  3. p, err := proxier.New(proxier.Options{NodeName: cfg.NodeName, Config:
//     that, MinSyncPeriod: cfg.MinSyncPeriod, SyncPeriod: cfg.SyncPeriod,
//     RepairPeriod: cfg.DriftRepairPeriod, Reconciler: rec, Recorder:
//     deps.Events.Recorder(), Observer: deps.NewObserver(rec), RemoteSubnets:
//     re-read deps.Network}, deps.Informers, deps.NodeInformers).
//  4. deps.Informers.Start(ctx.Done()); deps.NodeInformers.Start(ctx.Done()).
//  5. if deps.Metrics != nil { deps.Metrics.SetDebugSource(<per Service port:
//     rec.Statuses() grouped by Owner, rec.EndpointStatuses()>) }.
//  6. return p.Run(ctx).
func runProxier(ctx context.Context, cfg *options.Config, deps *Deps) error {
	return errProxierNotWired
}
