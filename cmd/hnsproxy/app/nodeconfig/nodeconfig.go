package nodeconfig

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/sourcevip"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// Capabilities is what this node's HNS can do, as hnsproxy will use it.
type Capabilities struct {
	// Features are HNS's, with MaxBackends replaced by --max-backends-per-lb
	// when set and ModifyLoadBalancer as --hns-modify-load-balancer decides.
	Features hnslb.Features
	// DSR is --enable-dsr where HNS supports it (ClusterIP load balancers).
	DSR bool
}

// CapabilitiesOf decides the features hnsproxy uses on HNS version v.
func CapabilitiesOf(v hnslb.Version, cfg *options.Config) Capabilities {
	caps := Capabilities{Features: hnslb.FeaturesFor(v)}
	caps.DSR = cfg.Winkernel.EnableDSR && caps.Features.DSR
	if cfg.HNS.MaxBackendsPerLB > 0 {
		caps.Features.MaxBackends = cfg.HNS.MaxBackendsPerLB
	}
	caps.Features.ModifyLoadBalancer = cfg.HNS.ModifyLoadBalancer.On(caps.Features)
	return caps
}

// Desired is the node-independent part of the mapping's input; the proxier
// fills node IPs (unless --bind-address names one) and the zone from the
// Node object. realHNS says the host's interfaces carry the overlay provider
// address (a simulated HNS has none, so the host MAC is derived from it).
func Desired(ctx context.Context, cfg *options.Config, hns hnslb.Reader, network *hnslb.Network, caps Capabilities, realHNS bool) (desired.Config, error) {
	c := desired.Config{
		NodeName:                         cfg.NodeName,
		Mode:                             desired.L2Bridge,
		EnableDSR:                        caps.DSR,
		IgnoreExternalIPs:                cfg.FeatureGates != nil && !cfg.FeatureGates.Enabled(options.AllowServiceExternalIPs),
		RefuseExternalIPsOnNodeAddresses: cfg.RefuseNodeExternalIPs,
		ForwardHealthCheckVIP:            cfg.Winkernel.ForwardHealthCheckVIP,
		HealthzPort:                      healthzPort(cfg.HealthzBindAddress),
		MaxBackends:                      caps.Features.MaxBackends,
		Features:                         caps.Features,
	}
	if ip, err := netip.ParseAddr(cfg.BindAddress); err == nil && !ip.IsUnspecified() {
		c.NodeIPs = map[intent.IPFamily]netip.Addr{intent.FamilyOf(ip): ip}
	}
	vip, err := netip.ParseAddr(cfg.Winkernel.SourceVIP)
	if err != nil && network.Type == hnslb.NetworkTypeOverlay {
		// None configured: the one the daemon reserved (package sourcevip).
		vip, err = sourcevip.Recorded(sourcevip.RecordFile(cfg.StateFile))
	}
	if err == nil && vip.IsValid() {
		c.SourceVIP = map[intent.IPFamily]netip.Addr{intent.FamilyOf(vip): vip}
	}
	if gw, err := hns.GetEndpointByName(ctx, cfg.Winkernel.RootHNSEndpointName); err == nil {
		c.HealthCheckGateway = map[intent.IPFamily]netip.Addr{}
		for _, ipc := range gw.IpConfigurations {
			if ip, err := netip.ParseAddr(ipc.IpAddress); err == nil {
				c.HealthCheckGateway[intent.FamilyOf(ip)] = ip
			}
		}
	} else if cfg.Winkernel.ForwardHealthCheckVIP {
		klog.FromContext(ctx).Info("Warning: no root HNS endpoint for health-check forwarding", "name", cfg.Winkernel.RootHNSEndpointName, "err", err)
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
