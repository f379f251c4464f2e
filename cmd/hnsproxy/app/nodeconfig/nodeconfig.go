package nodeconfig

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/sourcevip"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/internal/kubeip"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// Capabilities is what this node's HNS can do, as hnsproxy will use it.
type Capabilities struct {
	// Features are HNS's, with MaxBackends the cap in force (the build's
	// default, hnslb.DefaultBackendCap, or --max-backends-per-lb) and
	// ModifyLoadBalancer as --hns-modify-load-balancer decides.
	Features hnslb.Features
	// BackendCapReason says where Features.MaxBackends comes from.
	BackendCapReason string
	// BackendCapFixed: --max-backends-per-lb set the cap; it is never learned lower.
	BackendCapFixed bool
	// DSR is --enable-dsr where HNS supports it (ClusterIP load balancers),
	// and no workaround turns it off.
	DSR bool
	// OSBuild is the node's Windows build (zero when unknown).
	OSBuild hnslb.OSBuild
	// Workarounds are the known OS bugs of this build that hnsproxy works
	// around on this network (--os-bug-workarounds=auto), and Ignored those
	// it does not because the operator said none.
	Workarounds, Ignored []hnslb.OSBug
}

// CapabilitiesOf decides the features hnsproxy uses on HNS version v, OS
// build b and network (nil: unknown type, no network-specific workaround).
func CapabilitiesOf(v hnslb.Version, b hnslb.OSBuild, network *hnslb.Network, cfg *options.Config) Capabilities {
	caps := Capabilities{Features: hnslb.FeaturesFor(v), OSBuild: b}
	def := hnslb.DefaultBackendCap(b, v)
	caps.Features.MaxBackends, caps.BackendCapReason = def.Max, def.Reason
	if cfg.HNS.MaxBackendsPerLB > 0 {
		caps.Features.MaxBackends, caps.BackendCapFixed = cfg.HNS.MaxBackendsPerLB, true
		caps.BackendCapReason = fmt.Sprintf("--max-backends-per-lb (default here %d: %s)", def.Max, def.Reason)
	}
	caps.Features.ModifyLoadBalancer = cfg.HNS.ModifyLoadBalancer.On(caps.Features)
	for _, bug := range hnslb.KnownOSBugs(b) {
		if !bugApplies(bug, network, cfg) {
			continue
		}
		if cfg.HNS.OSBugWorkarounds == options.OSBugWorkaroundsNone {
			caps.Ignored = append(caps.Ignored, bug)
		} else {
			caps.Workarounds = append(caps.Workarounds, bug)
		}
	}
	caps.DSR = cfg.Winkernel.EnableDSR && caps.Features.DSR && !caps.WorksAround(hnslb.BugL2BridgeDSRPodToService)
	return caps
}

// bugApplies says whether bug can hurt this node's traffic as configured.
func bugApplies(bug hnslb.OSBug, network *hnslb.Network, cfg *options.Config) bool {
	if network == nil {
		return false
	}
	switch bug {
	case hnslb.BugL2BridgeDSRPodToService:
		return network.Type == hnslb.NetworkTypeL2Bridge && cfg.Winkernel.EnableDSR
	case hnslb.BugOverlayNodePortRemote:
		return network.Type == hnslb.NetworkTypeOverlay
	}
	return false
}

// WorksAround reports whether hnsproxy works around bug on this node.
func (c Capabilities) WorksAround(bug hnslb.OSBug) bool { return slices.Contains(c.Workarounds, bug) }

// EndpointReader reads an endpoint by name: Desired's one HNS call, for the
// root endpoint health checks are forwarded to.
type EndpointReader interface {
	GetEndpointByName(ctx context.Context, name string) (*hnslb.Endpoint, error)
}

// Desired is the node-independent part of the mapping's input; the proxier
// fills node IPs (of the families --bind-address does not name) and the
// zone from the Node object. realHNS says the host's interfaces carry the
// overlay provider address (a simulated HNS has none, so the host MAC is
// derived from it).
func Desired(ctx context.Context, cfg *options.Config, hns EndpointReader, network *hnslb.Network, caps Capabilities, realHNS bool) (desired.Config, error) {
	c := desired.Config{
		NodeName:                         cfg.NodeName,
		Mode:                             desired.L2Bridge,
		EnableDSR:                        caps.DSR,
		NodePortLocalBackends:            caps.WorksAround(hnslb.BugOverlayNodePortRemote),
		IgnoreExternalIPs:                cfg.FeatureGates != nil && !cfg.FeatureGates.Enabled(options.AllowServiceExternalIPs),
		RefuseExternalIPsOnNodeAddresses: cfg.RefuseNodeExternalIPs,
		ForwardHealthCheckVIP:            cfg.Winkernel.ForwardHealthCheckVIP,
		HealthzPort:                      healthzPort(cfg.HealthzBindAddress),
		MaxBackends:                      caps.Features.MaxBackends,
		Features:                         caps.Features,
		// Read once: a network replaced makes hnsproxy start again.
		NetworkSubnets: desired.NetworkSubnetsOf(network),
	}
	// Both read as options.Validate and kube-proxy read them (kubeip):
	// "010.0.0.11" is 10.0.0.11, not a value to drop.
	if ip, ok := kubeip.ParseAddr(cfg.BindAddress); ok && !ip.IsUnspecified() {
		ip = ip.Unmap()
		c.NodeIPs = map[intent.IPFamily]netip.Addr{intent.FamilyOf(ip): ip}
	}
	vip, ok := kubeip.ParseAddr(cfg.Winkernel.SourceVIP)
	var err error
	if !ok && network.Type == hnslb.NetworkTypeOverlay {
		// None configured: the one the daemon reserved (package sourcevip).
		vip, err = sourcevip.Recorded(sourcevip.RecordFile(cfg.StateFile))
	}
	if err == nil && vip.IsValid() {
		c.SourceVIP = map[intent.IPFamily]netip.Addr{intent.FamilyOf(vip): vip}
	}
	if gw, err := HealthCheckGateway(ctx, hns, cfg.Winkernel.RootHNSEndpointName); err == nil {
		c.HealthCheckGateway = gw
	} else if cfg.Winkernel.ForwardHealthCheckVIP {
		klog.FromContext(ctx).Info("Warning: no root HNS endpoint for health-check forwarding yet; looked up again on every sync", "name", cfg.Winkernel.RootHNSEndpointName, "err", err)
	}
	if network.Type == hnslb.NetworkTypeOverlay {
		c.Mode = desired.Overlay
		mac, err := hostMAC(network.ProviderAddress(), realHNS)
		if err != nil {
			return c, err
		}
		c.HostMAC = mac
	}
	return c, nil
}

// Usable says whether Desired can read from network what it needs of it:
// on overlay its provider address (the host's management IP) and, on a
// real HNS, the host interface holding it. HNS and the CNI set both up some
// seconds after the network appears (Flannel waits for them after its
// create; kube-proxy re-reads an overlay network 10 s after finding it), so
// a start that finds the network in between waits rather than failing.
func Usable(network *hnslb.Network, realHNS bool) error {
	if network.Type != hnslb.NetworkTypeOverlay {
		return nil
	}
	_, err := hostMAC(network.ProviderAddress(), realHNS)
	return err
}

// HealthCheckGateway reads the addresses, per family, of the root HNS
// endpoint (--root-hnsendpoint-name) that health checks are forwarded to.
func HealthCheckGateway(ctx context.Context, hns EndpointReader, name string) (map[intent.IPFamily]netip.Addr, error) {
	gw, err := hns.GetEndpointByName(ctx, name)
	if err != nil {
		return nil, err
	}
	out := map[intent.IPFamily]netip.Addr{}
	for _, ipc := range gw.IpConfigurations {
		if ip, err := netip.ParseAddr(ipc.IpAddress); err == nil {
			out[intent.FamilyOf(ip)] = ip
		}
	}
	return out, nil
}

// healthzPort is the port of the healthz address, 0 when there is none.
// The address is empty only when the health server is off
// (--healthz-port=0; an empty address is defaulted to :10256): then
// nothing listens, and no ingress IP's health check is forwarded to a port
// of its own (winkernel reads its healthz port from the same address).
func healthzPort(addr string) uint16 {
	if _, port, err := net.SplitHostPort(addr); err == nil {
		if p, err := strconv.ParseUint(port, 10, 16); err == nil {
			return uint16(p)
		}
	}
	return 0
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
