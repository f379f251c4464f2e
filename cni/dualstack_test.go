package cni_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// dualStack is host-local with one range set per family, as a dual-stack
// node's CNI config has it, and both families' cluster and service CIDRs.
func dualStack(c netConf, v6Subnet string) netConf {
	c.extra = map[string]any{
		"clusterCIDR": "10.244.0.0/16,fd00:10:244::/56",
		"serviceCIDR": "10.96.0.0/12,fd00:10:96::/112",
		"ipam": map[string]any{
			"type":    "host-local",
			"ranges":  [][]map[string]string{{{"subnet": c.subnet}}, {{"subnet": v6Subnet}}},
			"dataDir": c.dataDir,
		},
	}
	return c
}

// TestDualStackPodLifecycle: on an l2bridge network with a subnet per
// family, one pod gets one endpoint with both addresses, a result with both
// and a default route per family; CHECK passes; DEL frees both addresses;
// and the packet model delivers each family to it; with HNS answering as
// stored, and with every echo variant.
func TestDualStackPodLifecycle(t *testing.T) {
	forEachEcho(t, dualStackPodLifecycle)
}

func dualStackPodLifecycle(t *testing.T, nodeArgs ...string) {
	n1 := startNode(t, "n1", append([]string{"--node-ip", "192.168.10.1", "--node-ip", "fd00:192:168:10::1",
		"--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.1.0/24", "--subnet", "fd00:10:244:1::/64"}, nodeArgs...)...)
	conf := dualStack(netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.1.0/24", socket: n1.socket, dataDir: t.TempDir()}, "fd00:10:244:1::/64")
	rt := newRuntime(t, conf)
	web := pod{id: "web", netns: n1.createNamespace(t), caps: map[string]any{
		"portMappings": []map[string]any{{"hostPort": 8080, "containerPort": 80, "protocol": "tcp"}},
	}}
	client := pod{id: "client", netns: n1.createNamespace(t)}

	res := rt.add(t, web)
	if len(res.IPs) != 2 || res.IPs[0].Address.IP.To4() == nil || res.IPs[1].Address.IP.To4() != nil {
		t.Fatalf("ips %+v, want IPv4 then IPv6", res.IPs)
	}
	v4, v6 := res.IPs[0].Address.IP.String(), res.IPs[1].Address.IP.String()
	if res.IPs[0].Gateway.String() != "10.244.1.1" || res.IPs[1].Gateway.String() != "fd00:10:244:1::1" {
		t.Errorf("gateways %v %v", res.IPs[0].Gateway, res.IPs[1].Gateway)
	}
	var routes []string
	for _, r := range res.Routes {
		routes = append(routes, r.Dst.String()+" via "+r.GW.String())
	}
	if want := []string{"0.0.0.0/0 via 10.244.1.1", "::/0 via fd00:10:244:1::1"}; !slices.Equal(routes, want) {
		t.Errorf("routes %v, want %v", routes, want)
	}
	clientRes := rt.add(t, client)

	s := n1.dump(t)
	e := endpointByName(s, web.endpointName("cbr0"))
	if e == nil || len(e.IpConfigurations) != 2 || e.IpConfigurations[0].IpAddress != v4 || e.IpConfigurations[1].IpAddress != v6 {
		t.Fatalf("endpoint %+v, want one endpoint with %s and %s", e, v4, v6)
	}
	if r := policies[hnslb.SDNRoutePolicySetting](t, e, hnslb.EndpointPolicySDNRoute); len(r) != 2 || r[1].DestinationPrefix != "fd00:10:96::/112" {
		t.Errorf("SDNRoutes %+v, want one per service CIDR", r)
	}
	if pm := policies[hnslb.PortMappingPolicySetting](t, e, hnslb.EndpointPolicyPortMapping); len(pm) != 2 || pm[1].Flags != hnslb.NatFlagsIPv6 {
		t.Errorf("port mappings %+v, want the IPv6 twin", pm)
	}
	if err := rt.check(web); err != nil {
		t.Errorf("CHECK: %v", err)
	}
	if got := allocated(t, conf.dataDir); len(got) != 4 {
		t.Errorf("host-local holds %v, want two addresses per pod", got)
	}

	// Each family reaches the pod directly on the node.
	cv4, cv6 := clientRes.IPs[0].Address.IP.String(), clientRes.IPs[1].Address.IP.String()
	for _, flow := range [][2]string{{cv4 + ":40000", v4 + ":80/tcp"}, {"[" + cv6 + "]:40000", "[" + v6 + "]:80/tcp"}} {
		if tr := n1.trace(t, flow[0], flow[1]); tr.Outcome != "delivered-to-pod" || tr.Verdict.BackendEndpointID != e.ID {
			t.Errorf("%s -> %s: %s", flow[0], flow[1], tr.Summary)
		}
	}

	rt.del(t, web)
	rt.del(t, client)
	if got := allocated(t, conf.dataDir); len(got) != 0 {
		t.Errorf("host-local holds %v after DEL", got)
	}
	if s := n1.dump(t); len(s.Endpoints) != 0 {
		t.Errorf("endpoints left %v", names(s))
	}
}

// TestSDNForceBridgeGatewayIsIPv4Only: sdnbridge's forceBridgeGateway
// makes the IPv4 gateway the subnet's .2 and keeps IPAM's IPv6 gateway
// (common/core/network.go allocateIpam: Gateway[3] = 2, Gateway6 = the
// IPAM result's), in the result and on the endpoint.
func TestSDNForceBridgeGatewayIsIPv4Only(t *testing.T) {
	node := startNode(t, "n1", "--node-ip", "192.168.10.1", "--node-ip", "fd00:192:168:10::1",
		"--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.1.0/24", "--subnet", "fd00:10:244:1::/64")
	t.Setenv("HNS_ENDPOINT", "unix://"+node.socket)
	raw, err := json.Marshal(map[string]any{
		"cniVersion": "1.0.0", "name": "cbr0", "type": "sdnbridge",
		"optionalFlags": map[string]any{"forceBridgeGateway": true, "enableDualStack": true},
		"ipam": map[string]any{"type": "host-local", "dataDir": t.TempDir(),
			"ranges": [][]map[string]string{{{"subnet": "10.244.1.0/24"}}, {{"subnet": "fd00:10:244:1::/64", "gateway": "fd00:10:244:1::1"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cni := libcni.NewCNIConfigWithCacheDir([]string{dropInDir(t)}, t.TempDir(), nil)
	res := addAt(t, cni, confList(t, raw), pod{id: "p1", netns: node.createNamespace(t)})
	if len(res.IPs) != 2 {
		t.Fatalf("IPs %+v, want one per family", res.IPs)
	}
	if v4, v6 := res.IPs[0].Gateway.String(), res.IPs[1].Gateway.String(); v4 != "10.244.1.2" || v6 != "fd00:10:244:1::1" {
		t.Errorf("gateways %s and %s, want the forced 10.244.1.2 and IPAM's fd00:10:244:1::1", v4, v6)
	}
	e := endpointByName(node.dump(t), "p1_cbr0")
	if e == nil {
		t.Fatal("no endpoint p1_cbr0")
	}
	var hops []string
	for _, r := range e.Routes {
		hops = append(hops, r.DestinationPrefix+" via "+r.NextHop)
	}
	if want := []string{"0.0.0.0/0 via 10.244.1.2", "::/0 via fd00:10:244:1::1"}; !slices.Equal(hops, want) {
		t.Errorf("endpoint routes %v, want %v", hops, want)
	}
}

// TestDualStackNetworkCreatedWhenMissing: with no network on the node, ADD
// creates one with a subnet per family.
func TestDualStackNetworkCreatedWhenMissing(t *testing.T) {
	n1 := startNode(t, "n1", "--node-ip", "192.168.10.1")
	conf := dualStack(netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.2.0/24", socket: n1.socket, dataDir: t.TempDir()}, "fd00:10:244:2::/64")
	newRuntime(t, conf).add(t, pod{id: "p", netns: n1.createNamespace(t)})
	s := n1.dump(t)
	if len(s.Networks) != 1 || len(s.Networks[0].Ipams) != 1 {
		t.Fatalf("networks %+v", s.Networks)
	}
	var prefixes []string
	for _, sn := range s.Networks[0].Ipams[0].Subnets {
		prefixes = append(prefixes, sn.IpAddressPrefix)
	}
	if want := []string{"10.244.2.0/24", "fd00:10:244:2::/64"}; !slices.Equal(prefixes, want) {
		t.Errorf("subnets %v, want %v", prefixes, want)
	}
}

// TestIPv6OnOverlayIsRefused: HNS overlay carries no IPv6; an IPAM config
// that hands one out is a configuration error, and the addresses IPAM gave
// are returned.
func TestIPv6OnOverlayIsRefused(t *testing.T) {
	n1 := startNode(t, "n1", "--node-ip", "192.168.50.1",
		"--network-name", "vxlan0", "--network-type", "overlay", "--subnet", "10.244.5.0/24")
	conf := dualStack(netConf{version: "1.1.0", mode: "overlay", network: "vxlan0", subnet: "10.244.5.0/24", socket: n1.socket, dataDir: t.TempDir()}, "fd00:10:244:5::/64")
	rt := newRuntime(t, conf)
	_, err := rt.cni.AddNetworkList(context.Background(), rt.list, pod{id: "x", netns: n1.createNamespace(t)}.rt())
	if cniCode(err) != int(types.ErrInvalidNetworkConfig) {
		t.Fatalf("overlay ADD with an IPv6 range: %v, want code %d", err, types.ErrInvalidNetworkConfig)
	}
	if got := allocated(t, conf.dataDir); len(got) != 0 {
		t.Errorf("addresses left %v", got)
	}
	if s := n1.dump(t); len(s.Endpoints) != 0 {
		t.Errorf("endpoints left %v", names(s))
	}
}

// TestCheckFailsForAnAddressPrevResultRecordsAndTheEndpointLacks: CHECK
// holds the endpoint to every address prevResult records for the
// attachment's interface (the spec: the plugin consults prevResult for the
// expected addresses), not only the other way round. A dual-stack pod's
// endpoint made again behind the runtime's back with its IPv4 address only
// (same name, MAC and namespace) has lost its IPv6 address, and CHECK says
// so; before, it passed, since the one address the endpoint has is one
// prevResult records.
func TestCheckFailsForAnAddressPrevResultRecordsAndTheEndpointLacks(t *testing.T) {
	n1 := startNode(t, "n1", "--node-ip", "192.168.10.1", "--node-ip", "fd00:192:168:10::1",
		"--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.1.0/24", "--subnet", "fd00:10:244:1::/64")
	conf := dualStack(netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.1.0/24", socket: n1.socket, dataDir: t.TempDir()}, "fd00:10:244:1::/64")
	rt := newRuntime(t, conf)
	p := pod{id: "p1", netns: n1.createNamespace(t)}
	if res := rt.add(t, p); len(res.IPs) != 2 {
		t.Fatalf("ips %+v, want one per family", res.IPs)
	}
	if err := rt.check(p); err != nil {
		t.Fatalf("CHECK of the pod as ADD left it: %v", err)
	}

	s := n1.dump(t)
	e := endpointByName(s, p.endpointName("cbr0"))
	if err := n1.client.DeleteEndpoint(context.Background(), e.ID); err != nil {
		t.Fatal(err)
	}
	wireByHand(t, n1, s.Networks[0].ID, p, &hnslb.Endpoint{Name: e.Name, MacAddress: e.MacAddress,
		IpConfigurations: e.IpConfigurations[:1], Routes: e.Routes[:1], SchemaVersion: hnslb.V2})
	err := rt.check(p)
	if cniCode(err) != int(types.ErrInternal) || !strings.Contains(err.Error(), e.IpConfigurations[1].IpAddress) {
		t.Errorf("CHECK of the pod whose endpoint lacks its IPv6 address %s: %v, want code %d naming it", e.IpConfigurations[1].IpAddress, err, types.ErrInternal)
	}
	rt.del(t, p)
	if got := allocated(t, conf.dataDir); len(got) != 0 {
		t.Errorf("host-local holds %v after DEL", got)
	}
}

// TestGCDeletesDualStackEndpointsWhateverOrderHNSListsTheirAddresses: GC
// knows hnscni's endpoints by their name and by the MAC it derives from the
// pod's IPv4 address. Which order HNS lists a dual-stack endpoint's
// addresses in is not published (echo reorder rotates them); read from
// whichever came first, an endpoint listed IPv6 first was taken for another
// plugin's and left in HNS, its addresses reserved, for good.
func TestGCDeletesDualStackEndpointsWhateverOrderHNSListsTheirAddresses(t *testing.T) {
	n1 := startNode(t, "n1", "--node-ip", "192.168.10.1", "--node-ip", "fd00:192:168:10::1", "--echo=reorder",
		"--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.1.0/24", "--subnet", "fd00:10:244:1::/64")
	conf := dualStack(netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.1.0/24", socket: n1.socket, dataDir: t.TempDir()}, "fd00:10:244:1::/64")
	rt := newRuntime(t, conf)
	running := pod{id: "running", netns: n1.createNamespace(t)}
	rt.add(t, running)
	// Consecutive answers rotate alike-sized lists by one place more each:
	// of two gone pods, one is listed IPv6 first.
	for _, id := range []string{"gone1", "gone2"} {
		rt.add(t, pod{id: id, netns: n1.createNamespace(t)})
	}

	gc := conf
	gc.extra = map[string]any{"cni.dev/valid-attachments": []map[string]string{{"containerID": running.id, "ifname": "eth0"}}}
	if err, _ := newSandbox(t).run(t, map[string]string{"CNI_COMMAND": "GC"}, gc.pluginJSON(t)); err != nil {
		t.Fatalf("GC: %+v", err)
	}
	if got := names(n1.dump(t)); !slices.Equal(got, []string{running.endpointName("cbr0")}) {
		t.Errorf("after GC endpoints %v, want only the listed pod's", got)
	}
	if got := allocated(t, conf.dataDir); len(got) != 2 {
		t.Errorf("after GC host-local holds %v, want the listed pod's two addresses", got)
	}
}
