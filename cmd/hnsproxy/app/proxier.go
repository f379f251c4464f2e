package app

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
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
		Features:  deps.Capabilities.Features,
		StateFile: cfg.StateFile,
		Takeover:  cfg.Takeover,
		Logger:    logger.WithName("reconciler"),

		StateWriteFailed: stateWriteFailed(deps.Events),
		CallTimeout:      cfg.HNS.CallTimeout,
		ListTimeout:      cfg.HNS.ListTimeout,
		CallTimedOut:     func(op string) { metrics.HNSCallTimeoutsTotal.WithLabelValues(op).Inc() },
	})
	if deps.Health != nil {
		deps.Health.SetHNSActivity(rec)
	}
	dcfg, err := desiredConfig(ctx, cfg, deps)
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
	}, deps.Informers, deps.NodeInformers)
	if err != nil {
		return err
	}
	deps.Informers.Start(ctx.Done())
	deps.NodeInformers.Start(ctx.Done())
	if deps.Metrics != nil {
		deps.Metrics.SetDebugSource(debugSource(cfg, deps, rec))
	}
	return p.Run(ctx)
}

// desiredConfig is the node-independent part of the mapping's input; the
// proxier fills node IPs (unless --bind-address names one) and the zone
// from the Node object.
func desiredConfig(ctx context.Context, cfg *options.Config, deps *Deps) (desired.Config, error) {
	c := desired.Config{
		NodeName:                         cfg.NodeName,
		Mode:                             desired.L2Bridge,
		EnableDSR:                        deps.Capabilities.DSR,
		IgnoreExternalIPs:                cfg.FeatureGates != nil && !cfg.FeatureGates.Enabled(options.AllowServiceExternalIPs),
		RefuseExternalIPsOnNodeAddresses: cfg.RefuseNodeExternalIPs,
		ForwardHealthCheckVIP:            cfg.Winkernel.ForwardHealthCheckVIP,
		HealthzPort:                      healthzPort(cfg.HealthzBindAddress),
		MaxBackends:                      deps.Capabilities.Features.MaxBackends,
		Features:                         deps.Capabilities.Features,
	}
	if ip, err := netip.ParseAddr(cfg.BindAddress); err == nil && !ip.IsUnspecified() {
		c.NodeIPs = map[intent.IPFamily]netip.Addr{intent.FamilyOf(ip): ip}
	}
	if vip, err := netip.ParseAddr(cfg.Winkernel.SourceVIP); err == nil {
		c.SourceVIP = map[intent.IPFamily]netip.Addr{intent.FamilyOf(vip): vip}
	}
	if gw, err := deps.HNS.GetEndpointByName(ctx, cfg.Winkernel.RootHNSEndpointName); err == nil {
		c.HealthCheckGateway = map[intent.IPFamily]netip.Addr{}
		for _, ipc := range gw.IpConfigurations {
			if ip, err := netip.ParseAddr(ipc.IpAddress); err == nil {
				c.HealthCheckGateway[intent.FamilyOf(ip)] = ip
			}
		}
	} else if cfg.Winkernel.ForwardHealthCheckVIP {
		klog.FromContext(ctx).Info("Warning: no root HNS endpoint for health-check forwarding", "name", cfg.Winkernel.RootHNSEndpointName, "err", err)
	}
	if deps.Network.Type == hnslb.NetworkTypeOverlay {
		c.Mode = desired.Overlay
		mac, err := hostMAC(deps.Network.ProviderAddress(), !cfg.HNS.IsSim() && !isUnix(cfg.HNS))
		if err != nil {
			return c, err
		}
		c.HostMAC = mac
	}
	return c, nil
}

// healthzPort is the port of the healthz address (kube-proxy's 10256 when unset).
func healthzPort(addr string) uint16 {
	if _, port, err := net.SplitHostPort(addr); err == nil {
		if p, err := strconv.ParseUint(port, 10, 16); err == nil {
			return uint16(p)
		}
	}
	return options.ProxyHealthzPort
}

// hostMAC is the MAC of the host interface holding the overlay network's
// provider address (kube-proxy's GetHostMac). With a simulated HNS there is
// no such interface, so a MAC is derived from the address: it is only data.
func hostMAC(providerAddress string, realHNS bool) (string, error) {
	ip := net.ParseIP(providerAddress)
	if ip == nil {
		return "", fmt.Errorf("overlay network has no provider address to find the host MAC by")
	}
	ifaces, err := net.Interfaces()
	if err == nil {
		for _, ifc := range ifaces {
			addrs, _ := ifc.Addrs()
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) && len(ifc.HardwareAddr) > 0 {
					return strings.ToUpper(strings.ReplaceAll(ifc.HardwareAddr.String(), ":", "-")), nil
				}
			}
		}
	}
	if realHNS {
		return "", fmt.Errorf("could not find the host MAC address for provider address %s", providerAddress)
	}
	v4 := ip.To4()
	if v4 == nil {
		v4 = ip[len(ip)-4:]
	}
	return fmt.Sprintf("00-15-5D-%02X-%02X-%02X", v4[1], v4[2], v4[3]), nil
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
