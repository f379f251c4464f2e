package cni_test

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestPluginSwitch is a node switching to hnscni with pods running. A pod
// win-bridge wired (endpoint "<containerID>_<network>" with HNS's MAC,
// address from host-local) is found and removed by hnscni's DEL, which
// releases its address. A pod an earlier hnscni wired ("<containerID>_eth0")
// passes CHECK, survives a GC that lists it, and is removed by DEL, or
// replaced by an ADD again. A pod hnscni wires now is named as win-bridge's
// DEL looks it up.
func TestPluginSwitch(t *testing.T) {
	const network = "cbr0"
	node := startNode(t, "n1", "--node-ip", "172.16.0.2", "--network-name", network, "--network-type", "l2bridge", "--subnet", "192.168.1.0/24")
	t.Setenv("HNS_ENDPOINT", "unix://"+node.socket)
	cniPath, dataDir := dropInDir(t), t.TempDir()
	list := referenceList(t, "flannel-host-gw-win-bridge.json", "1.1.0", dataDir)
	cni := libcni.NewCNIConfigWithCacheDir([]string{cniPath}, t.TempDir(), nil)
	netID := node.dump(t).Networks[0].ID

	// As win-bridge did it: host-local ADD, then the endpoint, attached.
	ref := pod{id: "ref1", netns: node.createNamespace(t)}
	refIP := hostLocalAdd(t, cniPath, list.Plugins[0].Bytes, ref)
	wireByHand(t, node, netID, ref, &hnslb.Endpoint{Name: ref.id + "_" + network,
		IpConfigurations: []hnslb.IPConfig{{IpAddress: refIP.Addr().String()}},
		Routes:           []hnslb.Route{{NextHop: "192.168.1.2", DestinationPrefix: "0.0.0.0/0"}}})
	if err := cni.DelNetworkList(context.Background(), list, ref.rt()); err != nil {
		t.Fatalf("DEL of win-bridge's pod: %v", err)
	}
	s := node.dump(t)
	if len(s.Endpoints) != 0 || len(namespaceEndpoints(t, namespaceByID(s, ref.netns))) != 0 {
		t.Errorf("win-bridge's endpoint left: %v", names(s))
	}
	if got := allocatedOn(t, dataDir, network); len(got) != 0 {
		t.Errorf("win-bridge's address not released: %v", got)
	}

	// As an earlier hnscni did it: "<containerID>_eth0", MAC from the address.
	old := pod{id: "old1", netns: node.createNamespace(t)}
	a, mac := wireLegacy(t, node, netID, cniPath, list, old)
	check := checkStdin(t, list, &current.Result{CNIVersion: "1.1.0",
		Interfaces: []*current.Interface{{Name: "eth0", Mac: mac.String(), Sandbox: old.netns}},
		IPs:        []*current.IPConfig{{Interface: current.Int(0), Address: net.IPNet{IP: net.IP(a[:]), Mask: net.CIDRMask(24, 32)}}}})
	sb := newSandbox(t)
	env := map[string]string{"CNI_COMMAND": "CHECK", "CNI_CONTAINERID": old.id, "CNI_NETNS": old.netns, "HNS_ENDPOINT": "unix://" + node.socket}
	if cerr, _ := sb.run(t, env, check); cerr != nil {
		t.Errorf("CHECK of the earlier hnscni's pod: %+v", cerr)
	}
	valid := []types.GCAttachment{{ContainerID: old.id, IfName: "eth0"}}
	if err := cni.GCNetworkList(context.Background(), list, &libcni.GCArgs{ValidAttachments: valid}); err != nil {
		t.Fatalf("GC: %v", err)
	}
	if got := names(node.dump(t)); !slices.Equal(got, []string{"old1_eth0"}) {
		t.Errorf("GC listing old1 left %v", got)
	}
	if err := cni.DelNetworkList(context.Background(), list, old.rt()); err != nil {
		t.Fatalf("DEL of the earlier hnscni's pod: %v", err)
	}
	if s := node.dump(t); len(s.Endpoints) != 0 || len(allocatedOn(t, dataDir, network)) != 0 {
		t.Errorf("after DEL: endpoints %v, addresses %v", names(s), allocatedOn(t, dataDir, network))
	}

	// ADD again of a pod an earlier hnscni wired replaces its endpoint and
	// address instead of failing on IPAM's one-address-per-attachment rule.
	again := pod{id: "old2", netns: node.createNamespace(t)}
	wireLegacy(t, node, netID, cniPath, list, again)
	addAt(t, cni, list, again)
	if got := names(node.dump(t)); !slices.Equal(got, []string{"old2_" + network}) || len(allocatedOn(t, dataDir, network)) != 1 {
		t.Errorf("re-ADD over a legacy endpoint: endpoints %v, addresses %v", got, allocatedOn(t, dataDir, network))
	}
	if err := cni.DelNetworkList(context.Background(), list, again.rt()); err != nil {
		t.Fatal(err)
	}

	// Wired now: the name win-bridge builds, containerID + "_" + name.
	now := pod{id: "new1", netns: node.createNamespace(t)}
	addAt(t, cni, list, now)
	if got := names(node.dump(t)); !slices.Equal(got, []string{now.id + "_" + list.Name}) {
		t.Errorf("endpoints %v, want %s_%s", got, now.id, list.Name)
	}
	if err := cni.DelNetworkList(context.Background(), list, now.rt()); err != nil {
		t.Fatal(err)
	}
}

// TestCheckPassesForAPodWinBridgeWired: a node switched to hnscni with a
// pod win-bridge wired; the runtime's cached result is win-bridge's (pkg/hns
// ConstructHcnResult: the interface named after the endpoint, HNS's MAC, no
// sandbox, no interface index). hnscni's CHECK passes it, checking what
// that result records (the endpoint, attached, with its address and MAC);
// win-bridge's own CHECK checks nothing.
func TestCheckPassesForAPodWinBridgeWired(t *testing.T) {
	const network = "cbr0"
	node := startNode(t, "n1", "--node-ip", "172.16.0.2", "--network-name", network, "--network-type", "l2bridge", "--subnet", "192.168.1.0/24")
	cniPath := dropInDir(t)
	list := referenceList(t, "flannel-host-gw-win-bridge.json", "1.0.0", t.TempDir())
	ref := pod{id: "ref1", netns: node.createNamespace(t)}
	refIP := hostLocalAdd(t, cniPath, list.Plugins[0].Bytes, ref)
	wireByHand(t, node, node.dump(t).Networks[0].ID, ref, &hnslb.Endpoint{Name: ref.endpointName(network),
		IpConfigurations: []hnslb.IPConfig{{IpAddress: refIP.Addr().String()}},
		Routes:           []hnslb.Route{{NextHop: "192.168.1.2", DestinationPrefix: "0.0.0.0/0"}}})
	e := endpointByName(node.dump(t), ref.endpointName(network))
	a := refIP.Addr().As4()
	result := func(ip net.IP) *current.Result {
		return &current.Result{CNIVersion: "1.0.0",
			Interfaces: []*current.Interface{{Name: e.Name, Mac: e.MacAddress}},
			IPs:        []*current.IPConfig{{Address: net.IPNet{IP: ip, Mask: net.CIDRMask(24, 32)}, Gateway: net.ParseIP("192.168.1.2")}}}
	}
	env := map[string]string{"CNI_COMMAND": "CHECK", "CNI_CONTAINERID": ref.id, "CNI_NETNS": ref.netns, "CNI_PATH": cniPath, "HNS_ENDPOINT": "unix://" + node.socket}
	if cerr, _ := newSandbox(t).run(t, env, checkStdin(t, list, result(net.IP(a[:])))); cerr != nil {
		t.Errorf("CHECK with win-bridge's result: %+v", cerr)
	}
	if cerr, _ := newSandbox(t).run(t, env, checkStdin(t, list, result(net.ParseIP("192.168.1.250")))); cerr == nil || cerr.Code != types.ErrInternal {
		t.Errorf("CHECK with win-bridge's result naming another address: %+v, want code 999", cerr)
	}
}

// checkStdin is a plugin's CHECK configuration: its list entry, as libcni
// completes it, with prev as prevResult.
func checkStdin(t *testing.T, list *libcni.NetworkConfigList, prev *current.Result) []byte {
	t.Helper()
	raw, err := json.Marshal(prev)
	if err != nil {
		t.Fatal(err)
	}
	var conf map[string]any
	if err := json.Unmarshal(list.Plugins[0].Bytes, &conf); err != nil {
		t.Fatal(err)
	}
	conf["name"], conf["cniVersion"], conf["prevResult"] = list.Name, list.CNIVersion, json.RawMessage(raw)
	out, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wireLegacy wires a pod as an earlier hnscni did: host-local's address,
// endpoint "<containerID>_eth0" with the MAC derived from the address. It
// returns the address and MAC.
func wireLegacy(t *testing.T, node *simNode, networkID, cniPath string, list *libcni.NetworkConfigList, p pod) ([4]byte, net.HardwareAddr) {
	t.Helper()
	ip := hostLocalAdd(t, cniPath, list.Plugins[0].Bytes, p)
	a := ip.Addr().As4()
	mac := net.HardwareAddr{0x0e, 0x2a, a[0], a[1], a[2], a[3]}
	wireByHand(t, node, networkID, p, &hnslb.Endpoint{Name: p.id + "_eth0",
		MacAddress:       strings.ToUpper(strings.ReplaceAll(mac.String(), ":", "-")),
		IpConfigurations: []hnslb.IPConfig{{IpAddress: ip.Addr().String(), PrefixLength: uint8(ip.Bits())}}})
	return a, mac
}

// hostLocalAdd allocates an address for a pod as a reference plugin does:
// host-local ADD with the plugin's own configuration (stdin).
func hostLocalAdd(t *testing.T, cniPath string, stdin []byte, p pod) netip.Prefix {
	t.Helper()
	return hostLocalReserve(t, cniPath, stdin, p.id, p.netns, "eth0")
}

// hostLocalReserve runs host-local's ADD for an attachment, as a script
// reserving an address by hand does.
func hostLocalReserve(t *testing.T, cniPath string, stdin []byte, containerID, netns, ifName string) netip.Prefix {
	t.Helper()
	r, err := invoke.ExecPluginWithResult(context.Background(), filepath.Join(cniPath, "host-local"), stdin,
		&invoke.Args{Command: "ADD", ContainerID: containerID, NetNS: netns, IfName: ifName, Path: cniPath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := current.NewResultFromResult(r)
	if err != nil || len(res.IPs) != 1 {
		t.Fatalf("host-local: %+v, %v", res, err)
	}
	a, _ := netip.AddrFromSlice(res.IPs[0].Address.IP.To4())
	ones, _ := res.IPs[0].Address.Mask.Size()
	return netip.PrefixFrom(a, ones)
}

// wireByHand creates an endpoint and attaches it to the pod's namespace,
// as another plugin would have.
func wireByHand(t *testing.T, node *simNode, networkID string, p pod, e *hnslb.Endpoint) {
	t.Helper()
	ctx := context.Background()
	created, err := node.client.CreateEndpoint(ctx, networkID, e)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.client.AddNamespaceEndpoint(ctx, p.netns, created.ID); err != nil {
		t.Fatal(err)
	}
}
