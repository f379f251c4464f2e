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
	"k8s.io/client-go/kubernetes"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/kubeapi"
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
	// options, the node's network and its HNS, as the daemon does; its
	// NodeName says which Node is this one.
	Config func(ctx context.Context, network *hnslb.Network, v hnslb.Version) (desired.Config, error)
}

// Read takes one snapshot of HNS and lists the Services, EndpointSlices and
// ReadWithin is Read given at most timeout. hcn calls are synchronous RPCs
// that ignore the context, so under a hung HNS (kubernetes/aks-engine#4315),
// when an operator most needs the diagnosis, Read would never return: past
// timeout ReadWithin gives up with an error that says so, and leaves the
// hung call behind.
func ReadWithin(ctx context.Context, timeout time.Duration, src Source) (*Inputs, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		in  *Inputs
		err error
	}
	done := make(chan result, 1)
	go func() {
		in, err := Read(ctx, src)
		done <- result{in, err}
	}()
	select {
	case r := <-done:
		return r.in, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("reading HNS and the API server: no answer within %v; HNS calls cannot be cancelled, so HNS may be hung (restarting the hns service clears a hung HNS)", timeout)
	}
}

// Nodes, then resolves the configuration the way hnsproxy does.
func Read(ctx context.Context, src Source) (*Inputs, error) {
	snap, err := hnslb.TakeSnapshot(ctx, src.HNS)
	if err != nil {
		return nil, fmt.Errorf("reading HNS: %w", err)
	}
	in := &Inputs{HNS: snap, StateFile: src.StateFile}
	if in.Network, err = findNetwork(snap, src.NetworkName); err != nil {
		return nil, err
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
	svcs, err := src.Kube.CoreV1().Services(metav1.NamespaceAll).List(ctx, svcOpts)
	if err != nil {
		return nil, fmt.Errorf("listing Services: %w", err)
	}
	slices, err := src.Kube.DiscoveryV1().EndpointSlices(metav1.NamespaceAll).List(ctx, sliceOpts)
	if err != nil {
		return nil, fmt.Errorf("listing EndpointSlices: %w", err)
	}
	nodes, err := src.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing Nodes: %w", err)
	}
	in.Services, in.Slices, in.Nodes = svcs.Items, slices.Items, nodes.Items
	if in.Config, err = src.Config(ctx, in.Network, snap.Version); err != nil {
		return nil, err
	}
	if err := in.fillFromNode(); err != nil {
		return nil, err
	}
	if src.StateFile != "" {
		in.Owned, in.OwnedErr = reconciler.ReadOwned(src.StateFile)
	} else {
		in.OwnedErr = fmt.Errorf("no state file given (--state-file)")
	}
	return in, nil
}

// findNetwork is the pods' HNS network by name ("" picks the only one),
// matched without regard to case as the daemon's read by name finds it
// (the simulator's rule, sim networkByName).
func findNetwork(snap *hnslb.Snapshot, name string) (*hnslb.Network, error) {
	var names []string
	for i := range snap.Networks {
		n := &snap.Networks[i]
		if strings.EqualFold(n.Name, name) || (name == "" && len(snap.Networks) == 1) {
			return n, nil
		}
		names = append(names, n.Name)
	}
	return nil, fmt.Errorf("HNS has no network %q (it has: %s); give hnsproxy's --network-name or --config", name, strings.Join(names, ", "))
}

// fillFromNode completes Config from this node's Node object as the
// proxier does: the zone label, and the node IPs (desired.NodeIPs) of the
// families --bind-address does not name.
func (in *Inputs) fillFromNode() error {
	node := in.node(in.Config.NodeName)
	if node == nil {
		return fmt.Errorf("no Node named %q in the cluster (use hnsproxy's --hostname-override)", in.Config.NodeName)
	}
	in.Config.Zone = node.Labels[v1.LabelTopologyZone]
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
