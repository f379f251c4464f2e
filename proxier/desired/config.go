package desired

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// NetworkMode is the kind of HNS network the node's pods live on.
type NetworkMode string

const (
	L2Bridge NetworkMode = "l2bridge"
	Overlay  NetworkMode = "overlay"
)

// RemoteSubnet is one RemoteSubnetRoute policy of an overlay network: the pod
// subnet a remote node hosts and that node's provider address.
type RemoteSubnet struct {
	Prefix          netip.Prefix
	ProviderAddress netip.Addr
}

// Config is everything about this node and hnsproxy's settings the mapping
// depends on. It is an input like the Services: a change means recompute.
type Config struct {
	// NodeName decides which endpoints are local (endpoint.nodeName).
	NodeName string
	// Zone is the node's topology.kubernetes.io/zone label ("" if none).
	Zone string
	// NodeIPs per family. On l2bridge a family without one is still served
	// (winkernel's dual-stack mode serves both families whatever the Node
	// lists), except its node ports; on overlay it gets no load balancers.
	NodeIPs map[intent.IPFamily]netip.Addr
	Mode    NetworkMode
	// SourceVIP per family (--source-vip), used on overlay only; l2bridge
	// load balancers use the node IP, or none (HNS uses the host's address,
	// as on every winkernel l2bridge load balancer) without one.
	SourceVIP map[intent.IPFamily]netip.Addr
	// HostMAC is the MAC of the node's interface carrying the node IP
	// (overlay: given to the source-VIP and service-VIP endpoints).
	HostMAC string
	// IgnoreExternalIPs leaves Service spec.externalIPs unprogrammed
	// (--feature-gates=AllowServiceExternalIPs=false).
	IgnoreExternalIPs bool
	// RefuseExternalIPsOnNodeAddresses refuses external IPs equal to the
	// node's address (--refuse-node-external-ips); kube-proxy programs them,
	// and bare-metal clusters rely on it, so it is off by default.
	RefuseExternalIPsOnNodeAddresses bool
	// EnableDSR asks for DSR on ClusterIP load balancers (--enable-dsr).
	EnableDSR bool
	// NodePortLocalBackends gives NodePort load balancers of Services with
	// externalTrafficPolicy Cluster only this node's endpoints when it has
	// any: the workaround for Windows Server 2022 overlay nodes, which break
	// NodePort traffic they forward to another node (hnslb.BugOverlayNodePortRemote).
	NodePortLocalBackends bool
	// ForwardHealthCheckVIP (--forward-healthcheck-vip) adds, for each
	// load-balancer ingress IP, a load balancer from ingressIP:healthPort to
	// the node's gateway endpoint, so cloud load balancers probing the
	// ingress IP reach hnsproxy's health servers.
	ForwardHealthCheckVIP bool
	// HealthzPort is the proxy healthz port (--healthz-bind-address port,
	// 10256 by default), probed when a Service has no health-check node port;
	// 0 when the health server is off, so nothing is forwarded to it.
	HealthzPort uint16
	// HealthCheckGateway is, per family, the IP of the node's root/gateway
	// HNS endpoint (--root-hnsendpoint-name) the health-check load balancers
	// forward to. Missing: no health-check load balancer, and a problem.
	HealthCheckGateway map[intent.IPFamily]netip.Addr
	// MaxBackends caps backends per load balancer; <= 0 uses Features.MaxBackends,
	// and if that is <= 0 too there is no cap.
	MaxBackends int
	Features    hnslb.Features
	// RemoteSubnets of the overlay network (ignored on l2bridge), indexed
	// once when they change (NewRemoteSubnetIndex); nil: none.
	RemoteSubnets *RemoteSubnetIndex
	// PodCIDRs are this node's pod subnets (the Node's spec.podCIDRs). On
	// overlay an address there that its slice places on no node is taken
	// for a pod of this node, not for a public IP (endpoints.go).
	PodCIDRs []netip.Prefix
	// NetworkSubnets are the subnets of the HNS network hnsproxy programs
	// (NetworkSubnetsOf), which the CNI made from what its IPAM gives this
	// node. An address in them and in PodCIDRs is a pod address of this
	// node (ownsPodAddress).
	NetworkSubnets []netip.Prefix
}

// inPodCIDRs reports whether ip is in one of this node's pod subnets.
func (c *Config) inPodCIDRs(ip netip.Addr) bool {
	for _, p := range c.PodCIDRs {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Validate reports settings hnsproxy cannot run with. The mapping itself
// never fails on a bad Config (it degrades: no DSR, node IP as source VIP),
// so callers validate once at start.
func (c Config) Validate() error {
	var errs []error
	if c.NodeName == "" {
		errs = append(errs, errors.New("node name is empty"))
	}
	if len(c.NodeIPs) == 0 {
		errs = append(errs, errors.New("no node IP"))
	}
	for fam, ip := range c.NodeIPs {
		if ip.Is4In6() || intent.FamilyOf(ip) != fam {
			errs = append(errs, fmt.Errorf("node IP %s is not IPv%d", ip, fam))
		}
	}
	switch c.Mode {
	case L2Bridge:
	case Overlay:
		for fam := range c.NodeIPs {
			// IPv6 is not served on overlay, so it needs no source VIP.
			if fam != intent.IPv6 && !c.SourceVIP[fam].IsValid() {
				errs = append(errs, fmt.Errorf("overlay network needs a source VIP for IPv%d", fam))
			}
		}
		if c.HostMAC == "" {
			errs = append(errs, errors.New("overlay network needs the host MAC"))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown network mode %q (want %q or %q)", c.Mode, L2Bridge, Overlay))
	}
	if c.EnableDSR && !c.Features.DSR {
		errs = append(errs, fmt.Errorf("DSR requested but HNS %s does not support it", c.Features.Version))
	}
	return errors.Join(errs...)
}

// ServesFamily reports whether this node serves fam at all: IPv4 always,
// IPv6 only where HNS supports IPv6 dual stack on a network that is not
// overlay (the two IPv6 cases of familyUnsupported). That is where
// kube-proxy runs winkernel dual-stack (DualStackCompatible); elsewhere it
// runs a single-stack proxier. FQDN slices (family 0) are served nowhere.
func (c Config) ServesFamily(fam intent.IPFamily) bool {
	switch fam {
	case intent.IPv4:
		return true
	case intent.IPv6:
		return c.Features.IPv6DualStack && c.Mode != Overlay
	}
	return false
}

// maxBackends is the effective cap (0: none).
func (c Config) maxBackends() int {
	if c.MaxBackends > 0 {
		return c.MaxBackends
	}
	return max(c.Features.MaxBackends, 0)
}

// LowerBackendCap sets the cap to learned, one HNS was found to enforce,
// if that is lower than the cap in force, which it returns.
func (c *Config) LowerBackendCap(learned int) (was int, lowered bool) {
	if learned <= 0 || (c.MaxBackends > 0 && c.MaxBackends <= learned) {
		return 0, false
	}
	was = c.MaxBackends
	if was <= 0 {
		was = c.Features.MaxBackends
	}
	c.MaxBackends = learned
	return was, true
}

// clusterDSR says whether ClusterIP load balancers use DSR.
func (c Config) clusterDSR() bool { return c.EnableDSR && c.Features.DSR }
