package diag

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/kubeapi"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/nodeconfig"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// Inputs is everything a diagnosis looks at, read once.
type Inputs struct {
	// Config is the mapping's input as hnsproxy resolves it on this node,
	// node IPs and zone filled from the Node object.
	Config   desired.Config
	HNS      *hnslb.Snapshot
	Network  *hnslb.Network
	Services []v1.Service
	Slices   []discoveryv1.EndpointSlice
	Nodes    []v1.Node
	// StateFile is hnsproxy's state file; Owned is what it says hnsproxy
	// owns, nil when it could not be read (OwnedErr says why).
	StateFile string
	Owned     *reconciler.Owned
	OwnedErr  error
}

// Source says where Read looks.
type Source struct {
	HNS         hnslb.Reader
	Kube        kubernetes.Interface
	NetworkName string
	StateFile   string
	// Config resolves the desired-state configuration from hnsproxy's
	// options, the node's network and its HNS, as the daemon does, with the
	// capabilities it decided them from; its NodeName says which Node is
	// this one.
	Config func(ctx context.Context, network *hnslb.Network, v hnslb.Version) (desired.Config, nodeconfig.Capabilities, error)
}

// ReadWithin takes one snapshot of HNS and lists the Services,
// EndpointSlices and Nodes, then resolves the configuration the way
// hnsproxy does, all within timeout. hcn calls are synchronous RPCs
// that ignore the context, so under a hung HNS (kubernetes/aks-engine#4315),
// when an operator most needs the diagnosis, a read would never return: past
// timeout ReadWithin gives up on the step under way, leaving a hung call
// behind, with an error that names it: HNS, which may be hung, or the API
// server, which did not answer (an operator told HNS may be hung would
// restart a healthy hns service).
func ReadWithin(ctx context.Context, timeout time.Duration, src Source) (*Inputs, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return read(ctx, src, func(s step, f func() error) error {
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			if err != nil && ctx.Err() != nil {
				return s.timedOut(timeout)
			}
			return err
		case <-ctx.Done():
			return s.timedOut(timeout)
		}
	})
}

// step is a part of the read that may not answer: one asking HNS, or one
// listing from the API server.
type step struct {
	what string
	hns  bool
}

func (s step) timedOut(timeout time.Duration) error {
	if s.hns {
		return fmt.Errorf("%s: no answer within %v; HNS calls cannot be cancelled, so HNS may be hung (restarting the hns service clears a hung HNS)", s.what, timeout)
	}
	return fmt.Errorf("%s: the API server did not answer within %v: is it reachable from this node (--kubeconfig, --master), and answering others (kubectl get --raw /readyz)?", s.what, timeout)
}

// read is ReadWithin with each step run by run.
func read(ctx context.Context, src Source, run func(step, func() error) error) (*Inputs, error) {
	var snap *hnslb.Snapshot
	if err := run(step{"reading HNS", true}, func() (err error) {
		if snap, err = hnslb.TakeSnapshot(ctx, src.HNS); err != nil {
			return fmt.Errorf("reading HNS: %w", err)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	in := &Inputs{HNS: snap, StateFile: src.StateFile}
	var err error
	if in.Network, err = findNetwork(snap, src.NetworkName); err != nil {
		return nil, whereTheNetworkWent(snap, src, err)
	}
	// The Services and slices hnsproxy lists, no others: another proxy's
	// Service must not read as missing here.
	narrowServices, narrowSlices, err := kubeapi.ProxiedLists()
	if err != nil {
		return nil, err
	}
	var svcOpts, sliceOpts metav1.ListOptions
	narrowServices(&svcOpts)
	narrowSlices(&sliceOpts)
	if err := run(step{what: "listing Services"}, func() error {
		services := src.Kube.CoreV1().Services(metav1.NamespaceAll)
		return listEach(ctx, "Services", svcOpts, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return services.List(ctx, o)
		}, func(svc *v1.Service) { in.Services = append(in.Services, *svc) })
	}); err != nil {
		return nil, err
	}
	if err := run(step{what: "listing EndpointSlices"}, func() error {
		slices := src.Kube.DiscoveryV1().EndpointSlices(metav1.NamespaceAll)
		return listEach(ctx, "EndpointSlices", sliceOpts, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return slices.List(ctx, o)
		}, func(s *discoveryv1.EndpointSlice) { in.Slices = append(in.Slices, *s) })
	}); err != nil {
		return nil, err
	}
	if err := run(step{what: "listing Nodes"}, func() error {
		nodes := src.Kube.CoreV1().Nodes()
		return listEach(ctx, "Nodes", metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return nodes.List(ctx, o)
		}, func(n *v1.Node) { in.Nodes = append(in.Nodes, trimNode(n)) })
	}); err != nil {
		return nil, err
	}
	// The configuration reads HNS again (the root endpoint, the OS build).
	var cfg desired.Config
	var caps nodeconfig.Capabilities
	if err := run(step{"reading HNS for hnsproxy's configuration", true}, func() (err error) {
		cfg, caps, err = src.Config(ctx, in.Network, snap.Version)
		return err
	}); err != nil {
		return nil, err
	}
	in.Config = cfg
	if err := in.fillFromNode(); err != nil {
		return nil, err
	}
	if src.StateFile != "" {
		in.Owned, in.OwnedErr = reconciler.ReadOwned(src.StateFile)
		if in.Owned != nil {
			in.Owned.Claim(snap.LoadBalancers, endpointsOn(snap, in.Network.ID))
			// A cap HNS was found to enforce on this build is the one
			// hnsproxy computes with, not the build's (the proxier's
			// keepBackendCap): without it, a node held at 64 would show
			// every larger Service's left-out backends as missing.
			in.Config.LowerBackendCap(in.Owned.KeptBackendCap(!caps.BackendCapFixed, caps.OSBuild, caps.Features))
		}
	} else {
		in.OwnedErr = fmt.Errorf("no state file given (--state-file)")
	}
	return in, nil
}

// endpointsOn are the endpoints of snap on the network networkID, as a
// start of hnsproxy lists them.
func endpointsOn(snap *hnslb.Snapshot, networkID string) []hnslb.Endpoint {
	var out []hnslb.Endpoint
	for _, ep := range snap.Endpoints {
		if strings.EqualFold(ep.HostComputeNetwork, networkID) {
			out = append(out, ep)
		}
	}
	return out
}

// findNetwork is the pods' HNS network by name ("" picks the only one),
// matched without regard to case as the daemon's read by name finds it
// (the simulator's rule, sim networkByName).
func findNetwork(snap *hnslb.Snapshot, name string) (*hnslb.Network, error) {
	for i := range snap.Networks {
		n := &snap.Networks[i]
		if strings.EqualFold(n.Name, name) || (name == "" && len(snap.Networks) == 1) {
			return n, nil
		}
	}
	return nil, fmt.Errorf("HNS has no network %q (it has: %s); give hnsproxy's --network-name or --config", name, networkNames(snap))
}

// networkNames lists the names of the networks HNS has, for an error.
func networkNames(snap *hnslb.Snapshot) string {
	names := make([]string, len(snap.Networks))
	for i := range snap.Networks {
		names[i] = snap.Networks[i].Name
	}
	return strings.Join(names, ", ")
}

// whereTheNetworkWent adds to notFound, findNetwork's error, what
// hnsproxy's state file tells: the network hnsproxy programmed is gone too
// (deleted by hand, by hnsdiag delete networks, or by a reboot, and not made
// again yet), so no flag is wrong; or HNS has it under another name than
// the one given. Without a state file that names a network, notFound stands.
func whereTheNetworkWent(snap *hnslb.Snapshot, src Source, notFound error) error {
	if src.StateFile == "" {
		return notFound
	}
	owned, err := reconciler.ReadOwned(src.StateFile)
	if err != nil || owned.Network == "" {
		return notFound
	}
	for i := range snap.Networks {
		if n := &snap.Networks[i]; strings.EqualFold(n.ID, owned.Network) {
			return fmt.Errorf("%w; hnsproxy's state file is of network %q (%s)", notFound, n.Name, n.ID)
		}
	}
	// The networks HNS has are named: a CNI that made the network again
	// under another name (a changed configuration) shows it there.
	return fmt.Errorf("HNS has no network %q (it has: %s), and the network hnsproxy last programmed (%s, from its state file) was deleted (Remove-HnsNetwork, hnsdiag delete networks, a reboot) and not made again under that name yet: the CNI makes it again (hnscni at the next pod's ADD; another CNI when its logs say), hnsproxy waits for it at its start (--hns-network-timeout), and pods wired before lost their endpoints",
		src.NetworkName, networkNames(snap), owned.Network)
}

// fillFromNode completes Config from this node's Node object as the
// proxier does: the zone label, the pod CIDRs, and the node IPs
// (desired.NodeIPs) of the families --bind-address does not name.
func (in *Inputs) fillFromNode() error {
	node := in.node(in.Config.NodeName)
	if node == nil {
		return fmt.Errorf("no Node named %q in the cluster (use hnsproxy's --hostname-override)", in.Config.NodeName)
	}
	in.Config.Zone = node.Labels[v1.LabelTopologyZone]
	in.Config.PodCIDRs = desired.PodCIDRsOf(node)
	in.Config.NodeIPs = desired.NodeIPs(node, in.Config.NodeIPs)
	if len(in.Config.NodeIPs) == 0 {
		return fmt.Errorf("the Node %q lists no InternalIP or ExternalIP address (and --bind-address names none): a starting hnsproxy waits for one, leaving HNS as it is, and a running one keeps its last known addresses (a NodeAddressesMissing event on the Node)", node.Name)
	}
	if err := in.Config.Validate(); err != nil {
		return fmt.Errorf("hnsproxy could not run with this configuration: %w", err)
	}
	return nil
}

func (in *Inputs) node(name string) *v1.Node {
	for i := range in.Nodes {
		if in.Nodes[i].Name == name {
			return &in.Nodes[i]
		}
	}
	return nil
}

// nodeIPs are this node's addresses as the packet model needs them.
func (in *Inputs) nodeIPs() []netip.Addr {
	var out []netip.Addr
	for _, fam := range []intent.IPFamily{intent.IPv4, intent.IPv6} {
		if ip := in.Config.NodeIPs[fam]; ip.IsValid() {
			out = append(out, ip)
		}
	}
	return out
}
