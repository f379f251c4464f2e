//go:build linux

package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// serviceProxyNameLabel marks Services another proxy owns; hnsproxy's
// informers leave them (and their slices) out, so the expectation does too.
const serviceProxyNameLabel = "service.kubernetes.io/service-proxy-name"

// nodeSettings are the parts of a node's desired.Config that come from
// hnsproxy's flags and HNS rather than from the API: built the way
// cmd/hnsproxy/app/nodeconfig builds them for the rig's flags (--enable-dsr,
// no --bind-address, no root endpoint, no health-check VIP; on overlay
// --source-vip and the network's routes to the other nodes' pod subnets),
// and the node's HNS build (-profiles): its version, OS build, the cap it
// enforces and whether hnsproxy works around its OS bugs.
type nodeSettings struct {
	Name        string
	HealthzPort uint16
	Version     hnslb.Version
	OSBuild     hnslb.OSBuild
	// HNSCap is the backend cap HNS enforces (0: its build's default).
	HNSCap int
	// BugWorkarounds is the node's --os-bug-workarounds.
	BugWorkarounds string
	Mode           desired.NetworkMode
	// SourceVIP and RemoteSubnets: overlay only.
	SourceVIP     netip.Addr
	RemoteSubnets []desired.RemoteSubnet
}

// settingsOf is node's settings in the rig's cluster.
// v and b are what its HNS reports, as hnsproxy reads them at start.
func settingsOf(node framework.NodeSpec, healthzPort uint16, v hnslb.Version, b hnslb.OSBuild) nodeSettings {
	ns := nodeSettings{Name: node.Name, HealthzPort: healthzPort, Version: v, OSBuild: b, HNSCap: hnsCap(node),
		BugWorkarounds: node.BugWorkaroundsFlag(), Mode: desired.L2Bridge}
	if clusterSpec.NetworkType != framework.NetworkOverlay {
		return ns
	}
	ns.Mode = desired.Overlay
	ns.SourceVIP = node.SourceVIP()
	for _, other := range clusterSpec.Nodes {
		if other.Name != node.Name {
			ns.RemoteSubnets = append(ns.RemoteSubnets, desired.RemoteSubnet{
				Prefix: netip.MustParsePrefix(other.PodCIDR), ProviderAddress: netip.MustParseAddr(other.NodeIP)})
		}
	}
	return ns
}

// expectation is what a node's HNS must hold: the desired state, and each
// Service's cluster IPs (namespace/name by IP), which no other Service's
// load balancer may ever carry, whatever the desired state says.
type expectation struct {
	state      *desired.State
	clusterIPs map[string]string
}

// expectedState lists the API objects with client-go and computes, with
// desired.Compute, what the node's HNS must hold. It shares no code path
// with the running proxier beyond the pure mapping.
func expectedState(ctx context.Context, client kubernetes.Interface, ns nodeSettings) (expectation, error) {
	sel := metav1.ListOptions{LabelSelector: "!" + serviceProxyNameLabel}
	svcs, err := client.CoreV1().Services(metav1.NamespaceAll).List(ctx, sel)
	if err != nil {
		return expectation{}, err
	}
	eps, err := client.DiscoveryV1().EndpointSlices(metav1.NamespaceAll).List(ctx, sel)
	if err != nil {
		return expectation{}, err
	}
	node, err := client.CoreV1().Nodes().Get(ctx, ns.Name, metav1.GetOptions{})
	if err != nil {
		return expectation{}, err
	}
	want := expectation{state: computeExpected(svcs.Items, eps.Items, node, ns), clusterIPs: map[string]string{}}
	for _, s := range svcs.Items {
		for _, ip := range s.Spec.ClusterIPs {
			want.clusterIPs[ip] = s.Namespace + "/" + s.Name
		}
	}
	return want, nil
}

func computeExpected(svcs []corev1.Service, eps []discoveryv1.EndpointSlice, node *corev1.Node, ns nodeSettings) *desired.State {
	return desired.Compute(desired.InputsOf(svcs, eps), nodeConfig(node, ns))
}

// nodeConfig mirrors desiredConfig (cmd/hnsproxy/app) plus the proxier's
// node-dependent part (node IPs from the Node's addresses, the zone label).
func nodeConfig(node *corev1.Node, ns nodeSettings) desired.Config {
	f := hnslb.FeaturesFor(ns.Version)
	f.MaxBackends = hnslb.DefaultBackendCap(ns.OSBuild, ns.Version).Max
	bugs := workedAround(ns)
	cfg := desired.Config{
		NodeName: ns.Name,
		Zone:     node.Labels[corev1.LabelTopologyZone],
		Mode:     ns.Mode,
		// --enable-dsr, where HNS can and no OS bug forbids it.
		EnableDSR:             f.DSR && !slices.Contains(bugs, hnslb.BugL2BridgeDSRPodToService),
		NodePortLocalBackends: slices.Contains(bugs, hnslb.BugOverlayNodePortRemote),
		HealthzPort:           ns.HealthzPort,
		MaxBackends:           backendCap(ns),
		Features:              f,
		NodeIPs:               desired.NodeHostIPs(node),
		PodCIDRs:              desired.PodCIDRsOf(node),
	}
	if ns.Mode == desired.Overlay {
		cfg.SourceVIP = map[intent.IPFamily]netip.Addr{intent.IPv4: ns.SourceVIP}
		cfg.RemoteSubnets = desired.NewRemoteSubnetIndex(ns.RemoteSubnets)
	}
	return cfg
}

// foreignSet are HNS objects others own on a node (pods' endpoints made by
// the CNI, and load balancers and endpoints planted as another agent's):
// hnsproxy must leave every one of them alone.
type foreignSet struct {
	LBs       map[string]bool
	Endpoints map[string]bool
}

// storedID is an object ID as HNS stores it and a snapshot shows it: lower
// case, whatever case an answer used (sim.Echo.UpperGUIDs).
func storedID(id string) string { return strings.ToLower(id) }

// diff is how a node's HNS departs from the expectation.
type diff struct {
	Leaked  []string // objects hnsproxy owns that nothing wants
	Missing []string // wanted objects HNS lacks
	Wrong   []string // wanted objects HNS holds differently (or twice)
	// ForeignDeleted are others' objects that disappeared.
	ForeignDeleted []string
}

func (d diff) clean() bool {
	return len(d.Leaked)+len(d.Missing)+len(d.Wrong)+len(d.ForeignDeleted) == 0
}

func (d diff) String() string {
	var b strings.Builder
	for _, part := range []struct {
		name  string
		items []string
	}{{"leaked", d.Leaked}, {"missing", d.Missing}, {"wrong", d.Wrong}, {"foreign deleted", d.ForeignDeleted}} {
		for _, s := range part.items {
			fmt.Fprintf(&b, "  %s: %s\n", part.name, s)
		}
	}
	return b.String()
}

// mayHoldUnseen are the frontends a foreign load balancer without port
// mappings may hold though no listing shows it: one of the other agent's
// own frontends on its VIPs (node-wide when it has none), which the failed
// create that left it asked for (sim.Faults.PartialHoldsFrontend).
func mayHoldUnseen(lb *hnslb.LoadBalancer) []intent.LBKey {
	if len(lb.PortMappings) > 0 {
		return nil
	}
	var keys []intent.LBKey
	for i := range otherAgentLoadBalancers {
		agent := &otherAgentLoadBalancers[i]
		k, ok := keyOf(agent)
		if ok && (slices.Contains(lb.FrontendVIPs, k.VIP) || (k.VIP == "" && len(lb.FrontendVIPs) == 0)) {
			keys = append(keys, k)
		}
	}
	return keys
}

// compare checks snap against exp: every desired load balancer once, with
// its frontend, port, protocol, flags, distribution, internal port and
// backend IP set, unless a foreign load balancer holds a frontend a tenant
// or controller chose (hnsproxy must leave it); no cluster IP carrying
// another Service's load balancer; every desired remote endpoint by IP;
// nothing else that hnsproxy could own; every foreign object still present.
func compare(snap *hnslb.Snapshot, exp expectation, foreign foreignSet) diff {
	var d diff
	want := exp.state
	epByID := endpointsByID(snap)
	lbByID := map[string]bool{}
	seen, heldByForeign := map[intent.LBKey]bool{}, map[intent.LBKey]bool{}
	for i := range snap.LoadBalancers {
		lb := &snap.LoadBalancers[i]
		lbByID[lb.ID] = true
		key, ok := keyOf(lb)
		if foreign.LBs[lb.ID] {
			if ok {
				heldByForeign[key] = true
			}
			for _, k := range mayHoldUnseen(lb) {
				heldByForeign[k] = true
			}
			continue
		}
		if !ok {
			d.Leaked = append(d.Leaked, fmt.Sprintf("load balancer %s without a port mapping: VIPs %v, source VIP %q, backends %s",
				lb.ID, lb.FrontendVIPs, lb.SourceVIP, backendNames(lb, epByID)))
			continue
		}
		w, wanted := want.LBs[key]
		switch {
		case !wanted:
			d.Leaked = append(d.Leaked, fmt.Sprintf("load balancer %s %s", lb.ID, key))
		case seen[key]:
			d.Wrong = append(d.Wrong, fmt.Sprintf("load balancer %s %s: a second one for the key", lb.ID, key))
		case exp.clusterIPs[key.VIP] != "" && !strings.HasPrefix(w.Owner, exp.clusterIPs[key.VIP]+":"):
			d.Wrong = append(d.Wrong, fmt.Sprintf("load balancer %s %s: cluster IP of %s taken by %s", lb.ID, key, exp.clusterIPs[key.VIP], w.Owner))
		default:
			if why := lbMismatch(lb, w, epByID); why != "" {
				d.Wrong = append(d.Wrong, fmt.Sprintf("load balancer %s %s (%s): %s", lb.ID, key, w.Owner, why))
			}
		}
		seen[key] = true
	}
	for key, w := range want.LBs {
		if !seen[key] && !(heldByForeign[key] && !w.Origin.Allocated()) {
			d.Missing = append(d.Missing, fmt.Sprintf("load balancer %s (%s)", key, w.Owner))
		}
	}
	remoteSeen := map[string]bool{}
	for i := range snap.Endpoints {
		ep := &snap.Endpoints[i]
		if foreign.Endpoints[ep.ID] {
			continue
		}
		ip := ep.IP()
		w, wanted := want.RemoteEndpoints[ip]
		switch {
		case !wanted:
			d.Leaked = append(d.Leaked, fmt.Sprintf("endpoint %s %s (remote %v)", ep.ID, ip, ep.IsRemote()))
		case remoteSeen[ip]:
			d.Wrong = append(d.Wrong, fmt.Sprintf("endpoint %s %s: a second one for the IP", ep.ID, ip))
		case w.Local == ep.IsRemote():
			d.Wrong = append(d.Wrong, fmt.Sprintf("endpoint %s %s: remote flag %v", ep.ID, ip, ep.IsRemote()))
		case ep.ProviderAddress() != w.ProviderAddress: // overlay: the node that hosts the address
			d.Wrong = append(d.Wrong, fmt.Sprintf("endpoint %s %s: provider address %q, want %q", ep.ID, ip, ep.ProviderAddress(), w.ProviderAddress))
		}
		remoteSeen[ip] = true
	}
	for ip := range want.RemoteEndpoints {
		if !remoteSeen[ip] {
			d.Missing = append(d.Missing, "remote endpoint "+ip)
		}
	}
	for id := range foreign.LBs {
		if !lbByID[id] {
			d.ForeignDeleted = append(d.ForeignDeleted, "load balancer "+id)
		}
	}
	for id := range foreign.Endpoints {
		if epByID[id] == nil {
			d.ForeignDeleted = append(d.ForeignDeleted, "endpoint "+id)
		}
	}
	for _, l := range [][]string{d.Leaked, d.Missing, d.Wrong, d.ForeignDeleted} {
		slices.Sort(l)
	}
	return d
}

// endpointsByID indexes snap's endpoints by ID.
// backendNames names lb's backends for a report: each endpoint's name and
// address, or its ID where HNS has no such endpoint.
func backendNames(lb *hnslb.LoadBalancer, eps map[string]*hnslb.Endpoint) []string {
	names := make([]string, 0, len(lb.HostComputeEndpoints))
	for _, id := range lb.HostComputeEndpoints {
		if ep := eps[id]; ep != nil {
			names = append(names, ep.Name+"@"+ep.IP())
		} else {
			names = append(names, id+" (gone)")
		}
	}
	return names
}

func endpointsByID(snap *hnslb.Snapshot) map[string]*hnslb.Endpoint {
	eps := make(map[string]*hnslb.Endpoint, len(snap.Endpoints))
	for i := range snap.Endpoints {
		eps[snap.Endpoints[i].ID] = &snap.Endpoints[i]
	}
	return eps
}

// keyOf is a realized load balancer's identity as the reconciler keys it.
func keyOf(lb *hnslb.LoadBalancer) (intent.LBKey, bool) {
	if len(lb.PortMappings) != 1 {
		return intent.LBKey{}, false
	}
	pm := lb.PortMappings[0]
	k := intent.LBKey{Family: intent.IPv4, Protocol: pm.Protocol, Port: pm.ExternalPort}
	if lb.Flags&hnslb.LoadBalancerFlagsIPv6 != 0 {
		k.Family = intent.IPv6
	}
	if len(lb.FrontendVIPs) > 0 {
		k.VIP = lb.FrontendVIPs[0]
	}
	return k, true
}

func lbMismatch(lb *hnslb.LoadBalancer, w *intent.LB, eps map[string]*hnslb.Endpoint) string {
	pm := lb.PortMappings[0]
	var why []string
	if len(lb.FrontendVIPs) > 1 {
		why = append(why, fmt.Sprintf("frontends %v", lb.FrontendVIPs))
	}
	if pm.InternalPort != w.InternalPort {
		why = append(why, fmt.Sprintf("internal port %d, want %d", pm.InternalPort, w.InternalPort))
	}
	if pm.Flags != w.PortFlags {
		why = append(why, fmt.Sprintf("port flags %d, want %d", pm.Flags, w.PortFlags))
	}
	if pm.DistributionType != w.Distribution {
		why = append(why, fmt.Sprintf("distribution %d, want %d", pm.DistributionType, w.Distribution))
	}
	if lb.Flags != w.Flags {
		why = append(why, fmt.Sprintf("flags %d, want %d", lb.Flags, w.Flags))
	}
	if lb.SourceVIP != w.SourceVIP {
		why = append(why, fmt.Sprintf("source VIP %q, want %q", lb.SourceVIP, w.SourceVIP))
	}
	var got, want []string
	for _, id := range lb.HostComputeEndpoints {
		if ep := eps[id]; ep != nil {
			got = append(got, ep.IP())
		} else {
			got = append(got, "missing:"+id)
		}
	}
	for _, b := range w.Backends {
		want = append(want, b.IP)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		why = append(why, fmt.Sprintf("backends %v, want %v", got, want))
	}
	return strings.Join(why, "; ")
}

// maxHistoryLines bounds what printWriteHistory prints of one object.
const maxHistoryLines = 40

// printWriteHistory prints, for each object a diff names, the lines of the
// node's hnssim write log that name its ID: which call stored it, whether
// its caller saw that call fail, what was kept or dropped.
func printWriteHistory(path string, d diff) {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "soak: no write log: %v\n", err)
		return
	}
	for _, id := range d.objectIDs() {
		lines := writeHistory(string(data), id)
		if len(lines) > maxHistoryLines {
			lines = append([]string{"..."}, lines[len(lines)-maxHistoryLines:]...)
		}
		fmt.Fprintf(os.Stderr, "  hnssim's write log on %s:\n    %s\n", id, strings.Join(lines, "\n    "))
	}
}

// writeHistory is every line of log that names id, each with the answer
// of the call that wrote it: the line after (HNS answers a call after
// applying it), or for what a failed create left, the line before (it is
// left after the answer).
func writeHistory(log, id string) []string {
	var out []string
	lines := strings.Split(log, "\n")
	answer := func(i int) bool { return i >= 0 && i < len(lines) && strings.Contains(lines[i], " answered ") }
	for i, l := range lines {
		if !strings.Contains(l, id) {
			continue
		}
		switch {
		case strings.Contains(l, "a failed create leaves") && answer(i-1):
			out = append(out, lines[i-1], l)
		case answer(i + 1):
			out = append(out, l, lines[i+1])
		default:
			out = append(out, l)
		}
	}
	return out
}

// objectIDs are the IDs of the objects d names, leaked, wrong or deleted.
func (d diff) objectIDs() []string {
	var ids []string
	for _, l := range [][]string{d.Leaked, d.Wrong, d.ForeignDeleted} {
		for _, s := range l {
			for _, f := range strings.Fields(s) {
				if len(f) == 36 && strings.Count(f, "-") == 4 {
					ids = append(ids, f)
					break
				}
			}
		}
	}
	return ids
}
