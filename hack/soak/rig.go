//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// The planted foreign load balancer's frontend, which tenants' external IPs aim at.
const (
	foreignFrontend = "203.0.113.10"
	foreignPort     = 9999
)

const (
	soakNamespace = "soak"
	podsPerNode   = 6
	// bigPodsPerNode are the pods each node adds to the big Services'
	// pool (bigServicesWanted): with the others, 84 in all.
	bigPodsPerNode = 36
	convergePoll   = time.Second
	// slowConvergence is how long after the faults the soak says what
	// still differs, once.
	slowConvergence = 10 * time.Second
)

// clusterSpec: two nodes on different HNS builds, one without
// ModifyLoadBalancer (updates are delete + create) and one with it, on an
// l2bridge network unless useNetwork chose overlay.
var clusterSpec = framework.ClusterSpec{
	NetworkType:  framework.NetworkL2Bridge,
	HNSWriteLogs: true, // whose call made what a run leaked
	Nodes: []framework.NodeSpec{
		{Name: "win-a", Profile: "ws2022", NodeIP: "192.168.50.11", PodCIDR: "10.244.1.0/24"},
		{Name: "win-b", Profile: "ws2025", NodeIP: "192.168.50.12", PodCIDR: "10.244.2.0/24"},
	},
}

// useNetwork sets the nodes' network type (-network): l2bridge, or a
// Flannel-style VXLAN overlay, where each node also holds remote endpoints
// for the other node's pods, a source VIP and a route to its pod subnet.
func useNetwork(networkType string) error {
	if networkType != framework.NetworkL2Bridge && networkType != framework.NetworkOverlay {
		return fmt.Errorf("network %q: want %s or %s", networkType, framework.NetworkL2Bridge, framework.NetworkOverlay)
	}
	clusterSpec.NetworkType = networkType
	return nil
}

// soakNetwork is the nodes' HNS network's name.
func soakNetwork() string { return clusterSpec.HNSNetwork() }

// rig is the running cluster with what the soak needs to judge it.
type rig struct {
	cluster *framework.Cluster
	pods    []framework.Pod
	// bigPool is every pod, the big Services' (empty unless bigServicesWanted).
	bigPool  []framework.Pod
	settings map[string]nodeSettings
	foreign  map[string]foreignSet
}

func startRig(ctx context.Context, cp *framework.ControlPlane, dir string, seed uint64, prepareStateDir func(node, dir string) error) (*rig, error) {
	spec := clusterSpec
	spec.PrepareStateDir = prepareStateDir
	spec.Nodes = slices.Clone(clusterSpec.Nodes)
	for i := range spec.Nodes {
		spec.Nodes[i].HNSSimArgs = append(variantArgs(errorVariants(seed, i)), echoArgs(seed, i)...)
	}
	c, err := framework.StartCluster(ctx, cp, spec, dir)
	if err != nil {
		return nil, err
	}
	r := &rig{cluster: c, settings: map[string]nodeSettings{}, foreign: map[string]foreignSet{}}
	if err := framework.EnsureNamespace(ctx, c, soakNamespace); err != nil {
		return r, err
	}
	for _, n := range c.Nodes {
		pods, err := n.WirePods(ctx, "soak", podsPerNode)
		if err != nil {
			return r, err
		}
		r.pods = append(r.pods, pods...)
		if bigServicesWanted() {
			big, err := n.WirePods(ctx, "big", bigPodsPerNode)
			if err != nil {
				return r, err
			}
			r.bigPool = append(r.bigPool, big...)
		}
		v, err := n.Sim.Client.Version(ctx)
		if err != nil {
			return r, err
		}
		b, err := n.Sim.Client.OSBuild(ctx)
		if err != nil {
			return r, err
		}
		r.settings[n.Name()] = settingsOf(n.Spec, uint16(n.Proxy.HealthzPort), v, b)
		if r.foreign[n.Name()], err = plantForeign(ctx, n); err != nil {
			return r, fmt.Errorf("node %s: planting foreign objects: %w", n.Name(), err)
		}
	}
	return r, nil
}

// plantForeign creates what another agent would own on the node: two
// remote endpoints and two load balancers over them that no Service
// wants. With the pods' endpoints (the CNI's) they are the node's foreign
// objects.
func plantForeign(ctx context.Context, n *framework.Node) (foreignSet, error) {
	f, err := plantOtherAgent(ctx, n, foreignSet{})
	if err != nil {
		return f, err
	}
	if err := leaveAgentPartials(ctx, n); err != nil {
		return f, fmt.Errorf("the other agent's failed creates: %w", err)
	}
	if f, err = plantOtherAgent(ctx, n, f); err != nil {
		return f, err
	}
	snap, err := n.Sim.Dump(ctx)
	if err != nil {
		return f, err
	}
	for _, ep := range snap.Endpoints {
		if isPodEndpoint(&ep) {
			f.Endpoints[ep.ID] = true
		}
	}
	return f, nil
}

// otherAgentEndpoints are the remote endpoints another agent keeps on each
// node, by name.
var otherAgentEndpoints = []struct{ name, ip, mac string }{
	{"other-agent-0", "10.250.0.1", "02-11-22-33-44-00"},
	{"other-agent-1", "10.250.0.2", "02-11-22-33-44-01"},
}

// otherAgentLoadBalancers are its load balancers, over those endpoints.
var otherAgentLoadBalancers = []hnslb.LoadBalancer{
	{FrontendVIPs: []string{foreignFrontend}, PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 9000, ExternalPort: foreignPort}}},
	// A node-wide one on a port outside the NodePort range.
	{PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolUDP, InternalPort: 5353, ExternalPort: 29999, Flags: hnslb.PortMappingFlagsLocalRoutedVIP}}},
}

// plantOtherAgent makes the other agent's endpoints and load balancers
// that HNS lacks (all at first; after an HNS restart dropped some, those,
// as the agent would make them again) and returns have with what HNS no
// longer holds taken out and what it holds of the agent's put in. The
// agent's objects are known by their names and, for a load balancer, by
// its frontend and its backends (the agent's endpoints, which no Service
// wants), so a try that failed half way is finished by the next, and what
// a failed create left without port mappings is known by those backends. A load
// balancer whose frontend hnsproxy took meanwhile (it may: nothing held
// it) is left out, and so stops being foreign.
func plantOtherAgent(ctx context.Context, n *framework.Node, have foreignSet) (foreignSet, error) {
	f := foreignSet{LBs: map[string]bool{}, Endpoints: map[string]bool{}}
	hns := n.Sim.Client
	snap, err := n.Sim.Dump(ctx)
	if err != nil {
		return f, err
	}
	network, err := hns.GetNetworkByName(ctx, soakNetwork())
	if err != nil {
		return f, err
	}
	agentEP := map[string]string{} // name -> ID
	for _, ep := range snap.Endpoints {
		if have.Endpoints[ep.ID] {
			f.Endpoints[ep.ID] = true // the pods' too
		}
		for _, a := range otherAgentEndpoints {
			if ep.Name == a.name {
				agentEP[a.name], f.Endpoints[ep.ID] = ep.ID, true
			}
		}
	}
	var epIDs []string
	for _, a := range otherAgentEndpoints {
		if id, ok := agentEP[a.name]; ok {
			epIDs = append(epIDs, id)
			continue
		}
		ep, err := hns.CreateEndpoint(ctx, network.ID, otherAgentEndpoint(a.name, a.ip, a.mac, network.Type))
		if err != nil {
			return f, fmt.Errorf("the other agent's endpoint %s: %w", a.name, err)
		}
		f.Endpoints[storedID(ep.ID)] = true
		epIDs = append(epIDs, storedID(ep.ID))
	}
	agentIDs := map[string]bool{}
	for _, id := range epIDs {
		agentIDs[id] = true
	}
	addAgentPartials(f, snap, agentIDs)
	refused := false
	for i, lb := range otherAgentLoadBalancers {
		if id := agentLoadBalancer(snap, agentIDs, lb); id != "" {
			f.LBs[id] = true
			continue
		}
		lb.HostComputeEndpoints, lb.SchemaVersion = epIDs, hnslb.V2
		created, err := hns.CreateLoadBalancer(ctx, &lb)
		if hnslb.IsPortAlreadyExists(err) {
			refused = true
			continue // hnsproxy's now (its frontend was free)
		}
		if err != nil {
			return f, fmt.Errorf("the other agent's load balancer %d: %w", i, err)
		}
		f.LBs[storedID(created.ID)] = true
	}
	if refused { // a refusal too may leave one
		if snap, err = n.Sim.Dump(ctx); err != nil {
			return f, err
		}
		addAgentPartials(f, snap, agentIDs)
	}
	return f, nil
}

// addAgentPartials adds to f what the agent's failed creates left
// (sim.Faults.PartialCreates): load balancers without port mappings over
// its endpoints only, which no document of hnsproxy's names. They are the
// agent's, and hnsproxy must leave them alone.
func addAgentPartials(f foreignSet, snap *hnslb.Snapshot, agentIDs map[string]bool) {
	for _, got := range snap.LoadBalancers {
		if len(got.PortMappings) == 0 && len(got.HostComputeEndpoints) > 0 &&
			!slices.ContainsFunc(got.HostComputeEndpoints, func(id string) bool { return !agentIDs[id] }) {
			f.LBs[got.ID] = true
		}
	}
}

// leaveAgentPartials has each of the agent's load balancer creates fail
// once, refused as invalid, leaving a load balancer without port mappings
// that holds nothing (kubernetes/kubernetes#141488; PartialHoldsFrontend
// off, so the agent's own load balancers still get their frontends). A
// node carries what another agent's failed creates left, and hnsproxy must
// not take it for its own (reconciler, claimInterrupted): not on a VIP it
// declared, not node-wide when it declared a node port.
func leaveAgentPartials(ctx context.Context, n *framework.Node) error {
	refuse := remote.FaultsRequest{ErrorRate: map[string]float64{string(sim.OpCreateLoadBalancer): 1},
		Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}, PartialCreates: 1}
	if err := n.Sim.SetFaults(ctx, refuse); err != nil {
		return err
	}
	snap, err := n.Sim.Dump(ctx)
	if err != nil {
		return err
	}
	var epIDs []string
	for _, ep := range snap.Endpoints {
		if slices.ContainsFunc(otherAgentEndpoints, func(a struct{ name, ip, mac string }) bool { return a.name == ep.Name }) {
			epIDs = append(epIDs, ep.ID)
		}
	}
	for _, lb := range otherAgentLoadBalancers {
		lb.HostComputeEndpoints, lb.SchemaVersion = epIDs, hnslb.V2
		if _, err := n.Sim.Client.CreateLoadBalancer(ctx, &lb); err == nil {
			return fmt.Errorf("a create refused by the injected fault succeeded")
		}
	}
	return n.Sim.SetFaults(ctx, remote.FaultsRequest{})
}

// agentLoadBalancer is the ID of the load balancer in snap on lb's
// frontend and port whose backends are all the agent's endpoints, or "".
func agentLoadBalancer(snap *hnslb.Snapshot, agentEPs map[string]bool, lb hnslb.LoadBalancer) string {
	for _, got := range snap.LoadBalancers {
		if !slices.Equal(got.FrontendVIPs, lb.FrontendVIPs) || len(got.PortMappings) == 0 ||
			got.PortMappings[0].ExternalPort != lb.PortMappings[0].ExternalPort || len(got.HostComputeEndpoints) == 0 {
			continue
		}
		if !slices.ContainsFunc(got.HostComputeEndpoints, func(id string) bool { return !agentEPs[id] }) {
			return got.ID
		}
	}
	return ""
}

// converge compares every node's HNS with the expectation until all agree
// or timeout passes, and returns the last comparison per node.
func (r *rig) converge(ctx context.Context, client kubernetes.Interface, timeout time.Duration) (map[string]diff, bool) {
	last := map[string]diff{}
	start, reported := time.Now(), false
	check := func(ctx context.Context) error {
		clean := true
		for _, n := range r.cluster.Nodes {
			want, err := expectedState(ctx, client, r.settings[n.Name()])
			if err != nil {
				return fmt.Errorf("node %s: the API objects: %w", n.Name(), err)
			}
			snap, err := n.Sim.Dump(ctx)
			if err != nil {
				return fmt.Errorf("node %s: HNS: %w", n.Name(), err)
			}
			d := compare(snap, want, r.foreign[n.Name()])
			last[n.Name()] = d
			clean = clean && d.clean()
		}
		if !clean {
			return errDiffers
		}
		return nil
	}
	err := framework.Poll(ctx, timeout, convergePoll, func(ctx context.Context) error {
		err := check(ctx)
		if err != nil && !reported && time.Since(start) >= slowConvergence {
			// Said once, with the time, so a slow convergence can be
			// matched with hnsproxy's log (kept with SOAK_KEEP_DIR=1).
			reported = true
			when := fmt.Sprintf("still differs %v after the faults (%s)", slowConvergence, stamp())
			if !errors.Is(err, errDiffers) {
				fmt.Fprintf(os.Stderr, "soak: not converged %v after the faults (%s): %v\n", slowConvergence, stamp(), err)
				when = "at the last comparison"
			}
			r.reportDiffs(last, when)
		}
		return err
	})
	if err != nil {
		r.reportDiffs(last, fmt.Sprintf("after %v", timeout))
		return last, false
	}
	return last, true
}

var errDiffers = errors.New("HNS differs from the API objects")

// stamp is the time now, for matching the soak's words with the logs.
func stamp() string { return time.Now().UTC().Format("15:04:05.000") }

// reportDiffs prints each node's differences, with the HNS writes on
// the objects they name.
func (r *rig) reportDiffs(last map[string]diff, when string) {
	for _, n := range r.cluster.Nodes {
		if d := last[n.Name()]; !d.clean() {
			fmt.Fprintf(os.Stderr, "soak: node %s %s:\n%s", n.Name(), when, d)
			printWriteHistory(n.HNSWriteLog(), d)
		}
	}
}

// panics counts log lines of every hnsproxy that mention a panic.
func (r *rig) panics() int {
	total := 0
	for _, n := range r.cluster.Nodes {
		f, err := os.Open(n.Proxy.LogPath())
		if err != nil {
			continue
		}
		s := bufio.NewScanner(f)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			if strings.Contains(strings.ToLower(s.Text()), "panic") {
				total++
				if total <= 5 {
					fmt.Fprintf(os.Stderr, "soak: %s: %s\n", n.Proxy.LogPath(), s.Text())
				}
			}
		}
		f.Close()
	}
	return total
}

// otherAgentEndpoint is the other agent's remote endpoint document: on
// overlay it names a provider address, as every overlay remote endpoint
// does (a host outside the cluster's nodes, so no route covers it).
func otherAgentEndpoint(name, ip, mac string, networkType hnslb.NetworkType) *hnslb.Endpoint {
	ep := &hnslb.Endpoint{
		Name:             name,
		IpConfigurations: []hnslb.IPConfig{{IpAddress: ip}},
		MacAddress:       mac,
		Flags:            hnslb.EndpointFlagsRemoteEndpoint,
		SchemaVersion:    hnslb.V2,
	}
	if networkType == hnslb.NetworkTypeOverlay {
		ep.Policies = []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
			hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: otherAgentProviderAddress})}
	}
	return ep
}

// otherAgentProviderAddress is the host the other agent's overlay endpoints live on.
const otherAgentProviderAddress = "192.168.50.99"

// isPodEndpoint says whether ep is a pod's, made by hnscni: local and in a
// pod's namespace. On overlay hnsproxy's source-VIP endpoint is local too,
// but in no namespace, and it is hnsproxy's to keep.
func isPodEndpoint(ep *hnslb.Endpoint) bool {
	return !ep.IsRemote() && ep.HostComputeNamespace != ""
}
