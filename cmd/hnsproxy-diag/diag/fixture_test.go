package diag

import (
	"context"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/nodeconfig"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// An l2bridge node win-a (10.0.0.11, pods 10.244.1.0/24) beside win-b
// (10.0.0.12, pods 10.244.2.0/24, not simulated). Services:
//
//	web/frontend  NodePort 10.96.0.20:80/TCP->8080, node port 30080; pods web-a (win-a), web-b (win-b)
//	web/ingress   LoadBalancer ETP Local 10.96.0.30:443->8443, node port 30443, ingress 203.0.113.10,
//	              health-check node port 31000; pod ingress-b on win-b only
const (
	self, other      = "win-a", "win-b"
	selfIP, otherIP  = "10.0.0.11", "10.0.0.12"
	webA, webB       = "10.244.1.10", "10.244.2.10"
	ingressB, client = "10.244.2.20", "10.244.1.50"
	frontendIP       = "10.96.0.20"
	ingressIP        = "203.0.113.10"
	// dual-a is a dual-stack pod on win-a that no Service of the fixture's own selects.
	dualA, dualA6 = "10.244.1.60", "fd00:10:244:1::60"
	sourceVIP     = "10.244.1.2"
)

type fixture struct {
	t         testing.TB
	hns       *sim.HNS
	kube      *fake.Clientset
	stateFile string
	network   string // the network diagnosed: "cbr0", where the fixture programs
	cfg       *options.Config
	nodeIPv6  map[string]string // a Node's IPv6 InternalIP, by name
}

// newFixture programs win-a's simulated HNS the way hnsproxy does: the
// desired state of the objects handed to the real reconciler.
func newFixture(t *testing.T) *fixture { return newFixtureEchoing(t, sim.Echo{}) }

// newFixtureEchoing is newFixture with an HNS that answers as echo says.
func newFixtureEchoing(t *testing.T, echo sim.Echo) *fixture { return newFixtureWith(t, echo) }

// newFixtureWith is newFixtureEchoing with more Kubernetes objects, which
// HNS is programmed for too.
func newFixtureWith(t testing.TB, echo sim.Echo, more ...runtime.Object) *fixture {
	return newFixtureOn(t, fixtureNode{profile: sim.ProfileWS2022, network: hnslb.NetworkTypeL2Bridge}, echo, more...)
}

// fixtureNode is the node a fixture diagnoses: its Windows version's HNS
// profile, its network type (an overlay node's source VIP is 10.244.1.2)
// and whether its Nodes have IPv6 addresses too (fd00::11, fd00::12),
// with the dual-stack Service web/dual (dualStack).
type fixtureNode struct {
	profile   string
	network   hnslb.NetworkType
	dualStack bool
}

// newFixtureOn is newFixtureWith on another node.
func newFixtureOn(t testing.TB, on fixtureNode, echo sim.Echo, more ...runtime.Object) *fixture {
	ctx := context.Background()
	p, err := sim.ProfileByName(on.profile)
	if err != nil {
		t.Fatal(err)
	}
	netType := on.network
	f := &fixture{t: t, hns: sim.New(sim.Options{Profile: p, Seed: 3, Echo: echo}), stateFile: filepath.Join(t.TempDir(), "state.json"), network: "cbr0"}
	if on.dualStack {
		f.nodeIPv6 = map[string]string{self: "fd00::11", other: "fd00::12"}
		more = append(dualStack(), more...)
	}
	// The ws2022 and later profiles model builds with the OS bugs fixed: no workaround.
	f.cfg = &options.Config{NodeName: self, StateFile: f.stateFile, Winkernel: options.Winkernel{NetworkName: "cbr0", EnableDSR: true},
		HNS: options.HNS{OSBugWorkarounds: options.OSBugWorkaroundsNone}}
	network := &hnslb.Network{Name: "cbr0", Type: netType,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}}
	if netType == hnslb.NetworkTypeOverlay {
		f.cfg.Winkernel.SourceVIP = sourceVIP
		network.Policies = []hnslb.NetworkPolicy{hnslb.NewNetworkPolicy(hnslb.NetworkPolicyProviderAddress,
			hnslb.ProviderAddressNetworkPolicySetting{ProviderAddress: selfIP})}
	}
	n, err := f.hns.CreateNetwork(ctx, network)
	if err != nil {
		t.Fatal(err)
	}
	for _, ips := range [][]string{{webA}, {client}, {dualA, dualA6}} {
		var cfgs []hnslb.IPConfig
		for _, ip := range ips {
			cfgs = append(cfgs, hnslb.IPConfig{IpAddress: ip})
		}
		if _, err := f.hns.CreateEndpoint(ctx, n.ID, &hnslb.Endpoint{Name: ips[0], IpConfigurations: cfgs}); err != nil {
			t.Fatal(err)
		}
	}
	f.kube = fake.NewClientset(append(f.objects(), more...)...)
	rec := f.startHNSProxy(ctx)
	if res := rec.Sync(ctx); res.Failed+res.Pending != 0 {
		t.Fatalf("programming HNS: %+v", res)
	}
	return f
}

// read reads the fixture without a deadline, resolving the configuration as the command does.
func (f *fixture) read() *Inputs {
	f.t.Helper()
	in, err := readNow(context.Background(), f.source())
	if err != nil {
		f.t.Fatal(err)
	}
	return in
}

// source is what the command hands Read for the fixture's node.
func (f *fixture) source() Source {
	return Source{
		HNS: ReadOnly(f.hns), Kube: f.kube, NetworkName: f.network, StateFile: f.stateFile,
		Config: func(ctx context.Context, network *hnslb.Network, v hnslb.Version) (desired.Config, nodeconfig.Capabilities, error) {
			caps := nodeconfig.CapabilitiesOf(v, osBuildOf(ctx, f.hns), network, f.cfg)
			c, err := nodeconfig.Desired(ctx, f.cfg, f.hns, network, caps, false)
			return c, caps, err
		},
	}
}

func (f *fixture) objects() []runtime.Object {
	node := func(name, ip string) *v1.Node {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: ip}}}}
		if ip6 := f.nodeIPv6[name]; ip6 != "" {
			n.Status.Addresses = append(n.Status.Addresses, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip6})
		}
		return n
	}
	svc := func(name, ip string, typ v1.ServiceType, port, target, nodePort int32) *v1.Service {
		return &v1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name},
			Spec: v1.ServiceSpec{Type: typ, ClusterIP: ip, ClusterIPs: []string{ip}, Ports: []v1.ServicePort{{
				Name: "http", Protocol: v1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(target), NodePort: nodePort}}},
		}
	}
	slice := func(svc *v1.Service, pods map[string][2]string) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To(svc.Spec.Ports[0].TargetPort.IntVal)}},
		}
		for ip, at := range pods {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
				Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
				NodeName: ptr.To(at[1]), TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: svc.Namespace, Name: at[0]},
			})
		}
		return s
	}
	frontend := svc("frontend", frontendIP, v1.ServiceTypeNodePort, 80, 8080, 30080)
	ingress := svc("ingress", "10.96.0.30", v1.ServiceTypeLoadBalancer, 443, 8443, 30443)
	ingress.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
	ingress.Spec.HealthCheckNodePort = 31000
	ingress.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: ingressIP}}
	return []runtime.Object{
		node(self, selfIP), node(other, otherIP), frontend, ingress,
		slice(frontend, map[string][2]string{webA: {"web-a", self}, webB: {"web-b", other}}),
		slice(ingress, map[string][2]string{ingressB: {"ingress-b", other}}),
	}
}

// row finds the report's row for a Service port and role.
func row(t *testing.T, r *Report, service, role string) Row {
	t.Helper()
	for _, row := range r.LoadBalancers {
		if row.Service == service && row.Role == role {
			return row
		}
	}
	t.Fatalf("no %s row for %s in %+v", role, service, r.LoadBalancers)
	return Row{}
}

func osBuildOf(ctx context.Context, r hnslb.Reader) hnslb.OSBuild {
	b, _ := r.OSBuild(ctx)
	return b
}

// readNow is ReadWithin without its deadline.
func readNow(ctx context.Context, src Source) (*Inputs, error) {
	return read(ctx, src, func(_ step, f func() error) error { return f() })
}

// startHNSProxy runs what hnsproxy's start does over the fixture's cluster
// and state file: the desired state computed and handed to a reconciler,
// which adopts and claims what HNS holds. The caller syncs it.
func (f *fixture) startHNSProxy(ctx context.Context) *reconciler.Reconciler {
	f.t.Helper()
	in := f.read()
	state := desired.Compute(desired.InputsOf(in.Services, in.Slices), in.Config)
	rec := reconciler.New(f.hns, reconciler.Options{NetworkID: in.Network.ID, Features: in.Config.Features, StateFile: f.stateFile})
	for _, ep := range state.RemoteEndpoints {
		rec.UpsertEndpoint(ep)
	}
	for _, lb := range state.LBs {
		rec.Upsert(*lb)
	}
	if err := rec.Start(ctx); err != nil {
		f.t.Fatal(err)
	}
	return rec
}
