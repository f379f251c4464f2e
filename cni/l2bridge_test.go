package cni_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestL2BridgePodLifecycle runs pods through ADD, CHECK, DEL (twice), GC
// and STATUS on one l2bridge node, as a runtime would, and checks HNS and
// IPAM state after each step; with HNS answering what it stored, and with
// every echo variant at once (docs/simulator.md, Echo profiles: how real
// HNS echoes objects back is not known).
func TestL2BridgePodLifecycle(t *testing.T) {
	forEachEcho(t, l2bridgePodLifecycle)
}

// forEachEcho runs test on HNS answering exactly what it stored, and
// answering with every echo variant (hnssim --echo=all).
func forEachEcho(t *testing.T, test func(t *testing.T, nodeArgs ...string)) {
	t.Run("echo as stored", func(t *testing.T) { test(t) })
	t.Run("echo all", func(t *testing.T) { test(t, "--echo=all") })
}

func l2bridgePodLifecycle(t *testing.T, nodeArgs ...string) {
	n1 := startNode(t, "n1", append([]string{"--node-ip", "192.168.10.1",
		"--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.1.0/24"}, nodeArgs...)...)
	conf := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.1.0/24", socket: n1.socket, dataDir: t.TempDir()}
	rt := newRuntime(t, conf)
	subnet := netip.MustParsePrefix("10.244.1.0/24")

	pods := []pod{
		{id: "pod1", netns: n1.createNamespace(t)},
		{id: "pod2", netns: n1.createNamespace(t), caps: map[string]any{
			"portMappings": []map[string]any{{"hostPort": 8080, "containerPort": 80, "protocol": "tcp"}},
		}},
		{id: "pod3", netns: n1.createNamespace(t), caps: map[string]any{
			"dns": map[string]any{"servers": []string{"10.96.0.53"}, "searches": []string{"ns1.svc.cluster.local"}},
		}},
	}
	ips := map[string]netip.Addr{}
	for _, p := range pods {
		res := rt.add(t, p)
		if len(res.Interfaces) != 1 || res.Interfaces[0].Name != "eth0" || res.Interfaces[0].Sandbox != p.netns {
			t.Fatalf("%s: interfaces %+v", p.id, res.Interfaces)
		}
		if len(res.IPs) != 1 || res.IPs[0].Interface == nil || *res.IPs[0].Interface != 0 {
			t.Fatalf("%s: ips %+v", p.id, res.IPs)
		}
		ip, _ := netip.AddrFromSlice(res.IPs[0].Address.IP.To4())
		if !subnet.Contains(ip) || res.IPs[0].Gateway.String() != "10.244.1.1" {
			t.Errorf("%s: address %v gateway %v; want in %s via 10.244.1.1", p.id, res.IPs[0].Address, res.IPs[0].Gateway, subnet)
		}
		if len(res.Routes) != 1 || res.Routes[0].Dst.String() != "0.0.0.0/0" || res.Routes[0].GW.String() != "10.244.1.1" {
			t.Errorf("%s: routes %v", p.id, res.Routes)
		}
		ips[p.id] = ip
	}
	if ips["pod1"] == ips["pod2"] || ips["pod2"] == ips["pod3"] || ips["pod1"] == ips["pod3"] {
		t.Fatalf("addresses not distinct: %v", ips)
	}
	if got := rt.add(t, pod{id: "pod4", netns: n1.createNamespace(t)}).DNS; !slices.Equal(got.Nameservers, []string{"10.96.0.10"}) {
		t.Errorf("configured DNS in result = %+v", got)
	}
	pods = append(pods, pod{id: "pod4"})
	pods[3].netns = namespaceOfEndpoint(t, n1, "pod4_cbr0")
	ips["pod4"] = netip.MustParseAddr(endpointByName(n1.dump(t), "pod4_cbr0").IP())

	s := n1.dump(t)
	if len(s.Networks) != 1 || len(s.Endpoints) != 4 {
		t.Fatalf("dump: %d networks, %d endpoints; want 1, 4", len(s.Networks), len(s.Endpoints))
	}
	for _, p := range pods {
		e := endpointByName(s, p.endpointName("cbr0"))
		if e == nil {
			t.Fatalf("no endpoint %s", p.endpointName("cbr0"))
		}
		if e.IP() != ips[p.id].String() || e.HostComputeNetwork != s.Networks[0].ID || !strings.EqualFold(e.HostComputeNamespace, p.netns) {
			t.Errorf("%s: endpoint %+v", p.id, e)
		}
		ns := namespaceByID(s, p.netns)
		if got := namespaceEndpoints(t, ns); len(got) != 1 || !strings.EqualFold(got[0], e.ID) {
			t.Errorf("%s: namespace holds %v, want [%s]", p.id, got, e.ID)
		}
		nat := policies[hnslb.OutboundNatPolicySetting](t, e, hnslb.EndpointPolicyOutBoundNAT)
		if len(nat) != 2 || !slices.Equal(nat[0].Exceptions, []string{"10.244.0.0/16", "10.96.0.0/12"}) ||
			!slices.Equal(nat[1].Destinations, []string{ips[p.id].String()}) {
			t.Errorf("%s: OutBoundNAT policies %+v; want cluster+service exceptions, then loopback DSR to itself", p.id, nat)
		}
		if r := policies[hnslb.SDNRoutePolicySetting](t, e, hnslb.EndpointPolicySDNRoute); len(r) != 1 || r[0].DestinationPrefix != "10.96.0.0/12" || !r[0].NeedEncap {
			t.Errorf("%s: SDNRoute %+v", p.id, r)
		}
		if pa := e.ProviderAddress(); pa != "" {
			t.Errorf("%s: l2bridge endpoint has provider address %s", p.id, pa)
		}
	}
	if pm := policies[hnslb.PortMappingPolicySetting](t, endpointByName(s, "pod2_cbr0"), hnslb.EndpointPolicyPortMapping); len(pm) != 1 ||
		pm[0] != (hnslb.PortMappingPolicySetting{Protocol: 6, InternalPort: 80, ExternalPort: 8080}) {
		t.Errorf("pod2 port mappings %+v", pm)
	}
	if d := endpointByName(s, "pod3_cbr0").Dns; !slices.Equal(d.ServerList, []string{"10.96.0.53"}) || !slices.Equal(d.Search, []string{"ns1.svc.cluster.local"}) {
		t.Errorf("pod3 runtime DNS not applied: %+v", d)
	}
	if got := allocated(t, conf.dataDir); len(got) != 4 {
		t.Errorf("host-local holds %v, want 4 addresses", got)
	}

	for _, p := range pods {
		if err := rt.check(p); err != nil {
			t.Errorf("CHECK %s: %v", p.id, err)
		}
	}

	// pod1 reaches pod2 directly on the node.
	tr := n1.trace(t, ips["pod1"].String()+":40000", ips["pod2"].String()+":80/tcp")
	if tr.Outcome != "delivered-to-pod" || tr.Verdict.BackendEndpointID != endpointByName(s, "pod2_cbr0").ID {
		t.Errorf("pod1 -> pod2: %s", tr.Summary)
	}

	// DEL twice; the second finds nothing and still succeeds.
	rt.del(t, pods[0])
	rt.del(t, pods[0])
	// DEL after the runtime already removed the pod's namespace.
	n1.hnssim(t, "delete-namespace", pods[1].netns)
	rt.del(t, pods[1])
	s = n1.dump(t)
	if endpointByName(s, "pod1_cbr0") != nil || endpointByName(s, "pod2_cbr0") != nil || len(s.Endpoints) != 2 {
		t.Fatalf("after DEL: endpoints %v", names(s))
	}
	if got := namespaceEndpoints(t, namespaceByID(s, pods[0].netns)); len(got) != 0 {
		t.Errorf("pod1's namespace still holds %v", got)
	}
	if got := allocated(t, conf.dataDir); len(got) != 2 || slices.Contains(got, ips["pod1"].String()) || slices.Contains(got, ips["pod2"].String()) {
		t.Errorf("host-local holds %v after DEL of pod1 and pod2", got)
	}

	// CHECK notices an endpoint removed behind the runtime's back.
	if err := n1.client.DeleteEndpoint(context.Background(), endpointByName(s, "pod4_cbr0").ID); err != nil {
		t.Fatal(err)
	}
	if err := rt.check(pods[3]); cniCode(err) != int(types.ErrUnknownContainer) {
		t.Errorf("CHECK of a vanished endpoint: %v, want code %d", err, types.ErrUnknownContainer)
	}
	rt.del(t, pods[3])

	// GC: pod5 was added by a runtime that has since lost its cache; only pod3 is valid.
	leaked := pod{id: "pod5", netns: n1.createNamespace(t)}
	newRuntime(t, conf).add(t, leaked)
	leakedIP := endpointByName(n1.dump(t), "pod5_cbr0").IP()
	// Its namespace is gone too, which detaches the endpoint.
	n1.hnssim(t, "delete-namespace", leaked.netns)
	// Another agent's endpoint, named in the same shape but not made by
	// hnscni (no address-derived MAC), is not GC's to delete.
	foreign, err := n1.client.CreateEndpoint(context.Background(), s.Networks[0].ID, &hnslb.Endpoint{
		Name: "cbr0_sourcevip", IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.250", PrefixLength: 24}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.cni.GCNetworkList(context.Background(), rt.list, &libcni.GCArgs{
		ValidAttachments: []types.GCAttachment{{ContainerID: "pod3", IfName: "eth0"}},
	}); err != nil {
		t.Fatalf("GC: %v", err)
	}
	s = n1.dump(t)
	if got := names(s); !slices.Equal(got, []string{"cbr0_sourcevip", "pod3_cbr0"}) || !strings.EqualFold(endpointByName(s, "cbr0_sourcevip").ID, foreign.ID) {
		t.Errorf("after GC endpoints %v, want [cbr0_sourcevip pod3_cbr0]", got)
	}
	if got := allocated(t, conf.dataDir); !slices.Equal(got, []string{ips["pod3"].String()}) {
		t.Errorf("after GC host-local holds %v, want only pod3's %s (pod5 had %s)", got, ips["pod3"], leakedIP)
	}
	if err := rt.check(pods[2]); err != nil {
		t.Errorf("CHECK pod3 after GC: %v", err)
	}

	// STATUS: ready; then a missing network ADD cannot create (no mode)
	// and an unreachable HNS are code 50.
	if err := rt.cni.GetStatusNetworkList(context.Background(), rt.list); err != nil {
		t.Errorf("STATUS: %v", err)
	}
	missing := conf
	missing.network, missing.mode = "nonesuch", ""
	if err := newRuntime(t, missing).cni.GetStatusNetworkList(context.Background(), newRuntime(t, missing).list); cniCode(err) != int(types.ErrPluginNotAvailable) {
		t.Errorf("STATUS with a missing network: %v, want code 50", err)
	}
	down := conf
	down.socket = filepath.Join(shortDir(t), "gone.sock")
	rtDown := newRuntime(t, down)
	if err := rtDown.cni.GetStatusNetworkList(context.Background(), rtDown.list); cniCode(err) != int(types.ErrPluginNotAvailable) {
		t.Errorf("STATUS with HNS unreachable: %v, want code 50", err)
	}
}

// TestSDNBridgeTakesIPAMsGateway: sdnbridge (no forceBridgeGateway) gives
// the pod IPAM's gateway (common/core/network.go allocateIpam), in the
// result and as the endpoint's default route, not the network's. The
// configuration names .2 in its host-local range, as the reference's
// example l2bridgedualstack_host-local_ipam.conf does; the network says .1.
func TestSDNBridgeTakesIPAMsGateway(t *testing.T) {
	node := startNode(t, "n1", "--node-ip", "172.16.0.2", "--network-name", "winl2bridge", "--network-type", "l2bridge", "--subnet", "192.168.1.0/24")
	t.Setenv("HNS_ENDPOINT", "unix://"+node.socket)
	raw, err := json.Marshal(map[string]any{
		"cniVersion": "0.3.1", "name": "winl2bridge", "type": "sdnbridge",
		"ipam": map[string]any{"type": "host-local", "dataDir": t.TempDir(),
			"ranges": [][]map[string]string{{{"subnet": "192.168.1.0/24", "rangeStart": "192.168.1.10", "rangeEnd": "192.168.1.50", "gateway": "192.168.1.2"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cni := libcni.NewCNIConfigWithCacheDir([]string{dropInDir(t)}, t.TempDir(), nil)
	res := addAt(t, cni, confList(t, raw), pod{id: "p1", netns: node.createNamespace(t)})
	if gw := res.IPs[0].Gateway.String(); gw != "192.168.1.2" {
		t.Errorf("result gateway %s, want IPAM's 192.168.1.2", gw)
	}
	e := endpointByName(node.dump(t), "p1_winl2bridge")
	if e == nil || len(e.Routes) != 1 || e.Routes[0].NextHop != "192.168.1.2" {
		t.Errorf("endpoint %+v, want a default route via 192.168.1.2", e)
	}
}

// namespaceOfEndpoint reads which namespace an endpoint is attached to.
func namespaceOfEndpoint(t *testing.T, n *simNode, name string) string {
	t.Helper()
	e := endpointByName(n.dump(t), name)
	if e == nil {
		t.Fatalf("no endpoint %s", name)
	}
	return e.HostComputeNamespace
}

func names(s *hnslb.Snapshot) []string {
	var out []string
	for _, e := range s.Endpoints {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}
