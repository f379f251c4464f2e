package cni_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// referencePlugins are the binary names the reference configurations run
// under; a drop-in install puts hnscni there.
var referencePlugins = []string{"win-bridge", "win-overlay", "sdnbridge", "sdnoverlay", "calico"}

// dropInDir is a CNI_PATH with hnscni installed under each reference
// plugin's name, next to host-local.
func dropInDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range append(slices.Clone(referencePlugins), "host-local") {
		target := filepath.Join(binDir, "hnscni")
		if name == "host-local" {
			target = filepath.Join(binDir, "host-local")
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// referenceCase is one fixture of testdata/reference (README.md there
// names its source), the hnssim node its tool would have set up, and what
// a reference plugin's endpoint carries.
type referenceCase struct {
	file     string
	network  string
	nodeArgs []string
	gateway  string
	// policies are the endpoint's, in order; "POD" stands for its address.
	policies []hnslb.EndpointPolicy
	dns      []string // nameservers in the result
	// caps are the runtime's capability arguments (libcni passes those the
	// configuration declares).
	caps map[string]any
}

func natPolicy(exceptions ...string) hnslb.EndpointPolicy {
	return hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{Exceptions: exceptions})
}

func routePolicy(prefix string) hnslb.EndpointPolicy {
	return hnslb.NewEndpointPolicy(hnslb.EndpointPolicySDNRoute, hnslb.SDNRoutePolicySetting{DestinationPrefix: prefix, NeedEncap: true})
}

func paPolicy(pa string) hnslb.EndpointPolicy {
	return hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress, hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: pa})
}

// loopbackPolicy is loopback DSR as the reference plugins write it.
var loopbackPolicy = hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{Destinations: []string{"POD"}})

var referenceCases = []referenceCase{
	{
		file: "flannel-host-gw-win-bridge.json", network: "cbr0",
		nodeArgs: []string{"--network-type", "l2bridge", "--subnet", "192.168.1.0/24"},
		gateway:  "192.168.1.2", // win-bridge: the subnet's second address
		policies: []hnslb.EndpointPolicy{
			natPolicy("192.168.0.0/16", "11.0.0.0/8", "10.137.196.0/23"), // ipMasqNetwork already listed
			routePolicy("11.0.0.0/8"), routePolicy("10.137.198.27/32"), loopbackPolicy,
		},
		dns: []string{"11.0.0.10"},
	},
	{
		file: "flannel-vxlan-win-overlay.json", network: "vxlan0",
		nodeArgs: []string{"--network-type", "overlay", "--subnet", "192.168.2.0/24", "--provider-address", "172.16.0.2"},
		gateway:  "192.168.2.1",
		policies: []hnslb.EndpointPolicy{
			natPolicy("192.168.0.0/16", "11.0.0.0/8"), routePolicy("11.0.0.0/8"),
			// win-overlay (HNS v1) appends the network's PA, then for ipMasq
			// a second OutBoundNAT exempting the node's subnet.
			paPolicy("172.16.0.2"), natPolicy("192.168.2.0/24"),
		},
		dns: []string{"11.0.0.10"},
	},
	{
		file: "flannel-host-gw-sdnbridge.json", network: "cbr0",
		nodeArgs: []string{"--network-type", "l2bridge", "--subnet", "10.244.1.0/24"},
		gateway:  "10.244.1.2", // forceBridgeGateway
		policies: []hnslb.EndpointPolicy{
			natPolicy("10.244.0.0/16", "10.96.0.0/12"), routePolicy("10.96.0.0/12"), routePolicy("10.132.34.98/32"),
		},
	},
	{
		file: "sig-windows-tools-flannel-sdnoverlay.json", network: "flannel.4096",
		nodeArgs: []string{"--network-type", "overlay", "--subnet", "10.244.2.0/24", "--provider-address", "192.168.0.12"},
		gateway:  "10.244.2.1",
		policies: []hnslb.EndpointPolicy{
			natPolicy("10.96.0.0/12", "10.244.0.0/16"), routePolicy("10.96.0.0/12"), paPolicy("192.168.0.12"),
		},
	},
	{
		file: "calico-l2bridge.conflist", network: "Calico",
		nodeArgs: []string{"--network-type", "l2bridge", "--subnet", "10.244.3.0/24"},
		gateway:  "10.244.3.1",
		policies: []hnslb.EndpointPolicy{natPolicy("10.96.0.0/12"), routePolicy("10.96.0.0/12"), loopbackPolicy},
		// Calico declares the dns capability: the runtime's servers win.
		caps: map[string]any{"dns": map[string]any{"servers": []string{"10.96.0.53"}}},
		dns:  []string{"10.96.0.53"},
	},
}

// referenceList loads a fixture as libcni does, at a CNI version ("" keeps
// its own), with host-local's state in dataDir.
func referenceList(t *testing.T, file, cniVersion, dataDir string) *libcni.NetworkConfigList {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "reference", file))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	plugins := []any{doc}
	if list, ok := doc["plugins"].([]any); ok {
		plugins = list
	}
	for _, p := range plugins {
		p.(map[string]any)["ipam"].(map[string]any)["dataDir"] = dataDir
		if cniVersion != "" {
			p.(map[string]any)["cniVersion"] = cniVersion
		}
	}
	if cniVersion != "" {
		doc["cniVersion"] = cniVersion
	}
	raw, err = json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return confList(t, raw)
}

// confList loads a configuration list, or a single configuration (a .conf
// file) as the list of one a runtime makes of it.
func confList(t *testing.T, raw []byte) *libcni.NetworkConfigList {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if _, isList := doc["plugins"]; !isList {
		wrapped, err := json.Marshal(map[string]any{"cniVersion": doc["cniVersion"], "name": doc["name"], "plugins": []any{doc}})
		if err != nil {
			t.Fatal(err)
		}
		raw = wrapped
	}
	list, err := libcni.NetworkConfFromBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestReferenceConfigs drives each real-world configuration through libcni
// at its own CNI version and then at every version: ADD and DEL always,
// CHECK from 0.4.0, GC from 1.1.0 (libcni refuses them below). After the
// ADD at the configuration's own version the endpoint carries exactly the
// policies a win-bridge/win-overlay endpoint would, hnssim's dump shows
// them, and every result carries the address, gateway and DNS.
func TestReferenceConfigs(t *testing.T) {
	cniPath := dropInDir(t)
	for _, rc := range referenceCases {
		t.Run(rc.file, func(t *testing.T) {
			node := startNode(t, "n1", append([]string{"--node-ip", "172.16.0.2", "--network-name", rc.network}, rc.nodeArgs...)...)
			t.Setenv("HNS_ENDPOINT", "unix://"+node.socket)
			dataDir := t.TempDir()
			cni := libcni.NewCNIConfigWithCacheDir([]string{cniPath}, t.TempDir(), nil)
			subnet := netip.MustParsePrefix(rc.nodeArgs[3])

			own := referenceList(t, rc.file, "", dataDir)
			p := pod{id: "own", netns: node.createNamespace(t), caps: rc.caps}
			res := addAt(t, cni, own, p)
			ip := checkResult(t, res, rc, subnet)
			e := endpointByName(node.dump(t), "own_"+rc.network)
			if e == nil {
				t.Fatalf("no endpoint own_%s: %v", rc.network, names(node.dump(t)))
			}
			checkPolicies(t, e, rc.policies, ip)
			if err := cni.DelNetworkList(context.Background(), own, p.rt()); err != nil {
				t.Fatalf("DEL at %s: %v", own.CNIVersion, err)
			}

			for _, v := range version.All.SupportedVersions() {
				list := referenceList(t, rc.file, v, dataDir)
				p := pod{id: "at-" + v, netns: node.createNamespace(t), caps: rc.caps}
				checkResult(t, addAt(t, cni, list, p), rc, subnet)
				if gte(t, v, "0.4.0") {
					if err := cni.CheckNetworkList(context.Background(), list, p.rt()); err != nil {
						t.Errorf("CHECK at %s: %v", v, err)
					}
				}
				if gte(t, v, "1.1.0") {
					leaked := pod{id: "leaked", netns: node.createNamespace(t), caps: rc.caps}
					addAt(t, cni, list, leaked)
					valid := []types.GCAttachment{{ContainerID: p.id, IfName: "eth0"}}
					if err := cni.GCNetworkList(context.Background(), list, &libcni.GCArgs{ValidAttachments: valid}); err != nil {
						t.Errorf("GC at %s: %v", v, err)
					}
					if got := names(node.dump(t)); !slices.Equal(got, []string{p.id + "_" + rc.network}) {
						t.Errorf("after GC at %s: endpoints %v, want only %s's", v, got, p.id)
					}
				}
				if err := cni.DelNetworkList(context.Background(), list, p.rt()); err != nil {
					t.Errorf("DEL at %s: %v", v, err)
				}
				if s := node.dump(t); len(s.Endpoints) != 0 || len(allocatedOn(t, dataDir, list.Name)) != 0 {
					t.Errorf("after DEL at %s: endpoints %v, addresses %v", v, names(s), allocatedOn(t, dataDir, list.Name))
				}
			}
		})
	}
}

func addAt(t *testing.T, cni *libcni.CNIConfig, list *libcni.NetworkConfigList, p pod) *current.Result {
	t.Helper()
	r, err := cni.AddNetworkList(context.Background(), list, p.rt())
	if err != nil {
		t.Fatalf("ADD at %s: %v", list.CNIVersion, err)
	}
	if r.Version() != list.CNIVersion {
		t.Errorf("ADD at %s answered a %s result", list.CNIVersion, r.Version())
	}
	res, err := current.NewResultFromResult(r)
	if err != nil {
		t.Fatalf("ADD at %s: result %v", list.CNIVersion, err)
	}
	return res
}

// checkResult checks an ADD result (converted from its version) and
// returns the pod's address.
func checkResult(t *testing.T, res *current.Result, rc referenceCase, subnet netip.Prefix) netip.Addr {
	t.Helper()
	if len(res.IPs) != 1 {
		t.Fatalf("result IPs %+v", res.IPs)
	}
	ip, _ := netip.AddrFromSlice(res.IPs[0].Address.IP.To4())
	ones, _ := res.IPs[0].Address.Mask.Size()
	if !subnet.Contains(ip) || ones != subnet.Bits() || res.IPs[0].Gateway.String() != rc.gateway {
		t.Errorf("result address %v gateway %v, want in %s via %s", res.IPs[0].Address, res.IPs[0].Gateway, subnet, rc.gateway)
	}
	if !slices.Equal(res.DNS.Nameservers, rc.dns) {
		t.Errorf("result DNS %+v, want nameservers %v", res.DNS, rc.dns)
	}
	return ip
}

// checkPolicies compares an endpoint's policies with want, in order.
func checkPolicies(t *testing.T, e *hnslb.Endpoint, want []hnslb.EndpointPolicy, ip netip.Addr) {
	t.Helper()
	if len(e.Policies) != len(want) {
		t.Fatalf("endpoint policies %s, want %d", policyList(e.Policies), len(want))
	}
	for i, w := range want {
		var got, exp any
		_ = json.Unmarshal(e.Policies[i].Settings, &got)
		_ = json.Unmarshal([]byte(strings.ReplaceAll(string(w.Settings), `"POD"`, `"`+ip.String()+`"`)), &exp)
		g, _ := json.Marshal(got)
		x, _ := json.Marshal(exp)
		if e.Policies[i].Type != w.Type || string(g) != string(x) {
			t.Errorf("policy %d: %s %s, want %s %s", i, e.Policies[i].Type, g, w.Type, x)
		}
	}
}

func policyList(ps []hnslb.EndpointPolicy) string {
	b, _ := json.Marshal(ps)
	return string(b)
}

func gte(t *testing.T, v, than string) bool {
	t.Helper()
	ok, err := version.GreaterThanOrEqualTo(v, than)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestUnknownFieldWarning: a field hnscni does not know (sdnbridge's sample
// l2bridge.conf carries "master", which sdnbridge ignores too) keeps the
// ADD working and is named on stderr, where runtimes log a plugin's
// complaints; a near miss of a known field is refused, naming the field
// it resembles.
func TestUnknownFieldWarning(t *testing.T) {
	node := startNode(t, "n1", "--node-ip", "172.16.0.2", "--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.8.0/24")
	sb := newSandbox(t)
	env := map[string]string{"CNI_NETNS": node.createNamespace(t), "HNS_ENDPOINT": "unix://" + node.socket}
	conf := `{"cniVersion": "0.2.0", "name": "cbr0", "type": "sdnbridge", "master": "Ethernet", %s
		"ipam": {"type": "host-local", "subnet": "10.244.8.0/24", "dataDir": "` + t.TempDir() + `"}}`
	err, stdout := sb.run(t, env, []byte(strings.Replace(conf, "%s", "", 1)))
	if err != nil {
		t.Fatalf("ADD: %+v", err)
	}
	if !strings.Contains(sb.stderr, `unknown configuration field "master" ignored`) {
		t.Errorf("stderr %q does not name the unknown field", sb.stderr)
	}
	// The runtime parses stdout as the result: the warning is not on it.
	var res struct {
		IP4 *struct{ IP string } `json:"ip4"`
	}
	if jerr := json.Unmarshal(stdout, &res); jerr != nil || res.IP4 == nil || res.IP4.IP == "" {
		t.Errorf("stdout is not the 0.2.0 result alone (%v): %q", jerr, stdout)
	}
	err, _ = sb.run(t, env, []byte(strings.Replace(conf, "%s", `"serviceCIRD": "10.96.0.0/12",`, 1)))
	if err == nil || err.Code != types.ErrInvalidNetworkConfig || !strings.Contains(err.Msg, `did you mean "serviceCIDR"`) {
		t.Errorf("a typo'd field: %+v", err)
	}
}

// TestFailedCommandCarriesItsWarnings: libcni (containerd, CRI-O) copies a
// plugin's stderr to its own only after a command that succeeded; when the
// command fails it reports the error on stdout and drops stderr. So a
// warning that may explain the failure (a setting ignored as an unknown
// field) rides in the error's details, which the runtime shows with the
// error (the pod's FailedCreatePodSandBox event).
func TestFailedCommandCarriesItsWarnings(t *testing.T) {
	err, sb := runWithIgnoredField(t, map[string]string{"CNI_NETNS": "not-a-namespace-guid"})
	if err == nil || err.Code != types.ErrInvalidNetNS {
		t.Fatalf("ADD in a bad namespace: %+v", err)
	}
	if !strings.Contains(err.Details, `unknown configuration field "master" ignored`) {
		t.Errorf("the error's details %q do not carry the warning (stderr %q)", err.Details, sb.stderr)
	}
	if !strings.Contains(err.Details, "CNI_NETNS") && !strings.Contains(err.Details, "not-a-namespace-guid") {
		t.Errorf("the error's own details were lost: %q", err.Details)
	}
}

// TestStatusWritesNoWarnings: containerd runs STATUS on a 1.1.0
// configuration each time the kubelet asks for the runtime's status, every
// 5 seconds, and copies the plugin's stderr into its log after it. The
// configuration's warnings, which every ADD writes, would fill that log
// with the same lines forever; STATUS writes none.
func TestStatusWritesNoWarnings(t *testing.T) {
	err, sb := runWithIgnoredField(t, map[string]string{"CNI_COMMAND": "STATUS"})
	if err != nil {
		t.Fatalf("STATUS: %+v", err)
	}
	if sb.stderr != "" {
		t.Errorf("STATUS wrote on stderr: %q", sb.stderr)
	}
}

// runWithIgnoredField runs hnscni (ADD unless env says otherwise) on an
// l2bridge node with a 1.1.0 configuration carrying sdnbridge's "master",
// a field hnscni ignores with a warning.
func runWithIgnoredField(t *testing.T, env map[string]string) (*types.Error, *sandbox) {
	t.Helper()
	node := startNode(t, "n1", "--node-ip", "172.16.0.2", "--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.8.0/24")
	sb := newSandbox(t)
	env["HNS_ENDPOINT"] = "unix://" + node.socket
	conf := `{"cniVersion": "1.1.0", "name": "cbr0", "type": "sdnbridge", "master": "Ethernet",
		"ipam": {"type": "host-local", "subnet": "10.244.8.0/24", "dataDir": "` + t.TempDir() + `"}}`
	err, _ := sb.run(t, env, []byte(conf))
	return err, sb
}

// TestDelAfterTheNetworkIsGoneReleasesTheAddress: Calico's configuration
// (ipam subnet "usePodCidr", the HNS network's subnet) on a node that lost
// its HNS state (a reboot drops HNS networks that are not persistent;
// Calico makes its network again only later). The runtime's DEL of an old
// sandbox succeeds, as CNI asks of DEL when things are already gone, and
// releases the address: at 0.3.1 without prevResult, and from 0.4.0 with
// it. GC, which hands off to IPAM the same way, succeeds too.
func TestDelAfterTheNetworkIsGoneReleasesTheAddress(t *testing.T) {
	const network = "Calico"
	cniPath := dropInDir(t)
	for _, v := range []string{"0.3.1", "1.0.0", "1.1.0"} {
		t.Run(v, func(t *testing.T) {
			node := startNode(t, "n1", "--node-ip", "172.16.0.2", "--network-name", network, "--network-type", "l2bridge", "--subnet", "10.244.3.0/24")
			t.Setenv("HNS_ENDPOINT", "unix://"+node.socket)
			dataDir := t.TempDir()
			list := referenceList(t, "calico-l2bridge.conflist", v, dataDir)
			cni := libcni.NewCNIConfigWithCacheDir([]string{cniPath}, t.TempDir(), nil)
			p := pod{id: "old", netns: node.createNamespace(t)}
			addAt(t, cni, list, p)
			loseHNSState(t, node)

			if gte(t, v, "1.1.0") {
				// Listing the pod, so that libcni sends hnscni's GC no DEL.
				valid := []types.GCAttachment{{ContainerID: p.id, IfName: "eth0"}}
				if err := cni.GCNetworkList(context.Background(), list, &libcni.GCArgs{ValidAttachments: valid}); err != nil {
					t.Errorf("GC with the HNS network gone: %v", err)
				}
			}
			if err := cni.DelNetworkList(context.Background(), list, p.rt()); err != nil {
				t.Errorf("DEL with the HNS network gone: %v", err)
			}
			if got := allocatedOn(t, dataDir, list.Name); len(got) != 0 {
				t.Errorf("host-local still holds %v after DEL", got)
			}
		})
	}
}

// loseHNSState deletes a node's endpoints and networks, as a reboot drops
// HNS objects that are not persistent.
func loseHNSState(t *testing.T, node *simNode) {
	t.Helper()
	ctx := context.Background()
	s := node.dump(t)
	for _, e := range s.Endpoints {
		if e.HostComputeNamespace != "" {
			_ = node.client.RemoveNamespaceEndpoint(ctx, e.HostComputeNamespace, e.ID)
		}
		if err := node.client.DeleteEndpoint(ctx, e.ID); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range s.Networks {
		if err := node.client.DeleteNetwork(ctx, n.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReferenceConfigsTakeTheKubeletsDNS: on a real node the pod's DNS is
// the kubelet's (ClusterFirst: the cluster DNS Service, the namespace's
// search list, ndots:5), which containerd hands over as the "dns"
// capability; Flannel's outer configuration declares it and passes
// runtimeConfig to its delegate (kubernetes-sigs/sig-windows-tools
// hostprocess/flannel/flanneld/flannel-overlay.yml), Calico's declares it
// itself. Under every reference configuration the pod's endpoint and the
// result carry the kubelet's DNS, whatever the configuration's own "dns"
// says.
func TestReferenceConfigsTakeTheKubeletsDNS(t *testing.T) {
	cniPath := dropInDir(t)
	kubelet := map[string]any{
		"servers":  []string{"10.96.0.10"},
		"searches": []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local"},
		"options":  []string{"ndots:5"},
	}
	want := hnslb.DNS{ServerList: kubelet["servers"].([]string), Search: kubelet["searches"].([]string), Options: kubelet["options"].([]string)}
	for _, rc := range referenceCases {
		t.Run(rc.file, func(t *testing.T) {
			node := startNode(t, "n1", append([]string{"--node-ip", "172.16.0.2", "--network-name", rc.network}, rc.nodeArgs...)...)
			t.Setenv("HNS_ENDPOINT", "unix://"+node.socket)
			cni := libcni.NewCNIConfigWithCacheDir([]string{cniPath}, t.TempDir(), nil)
			list := withCapabilities(t, referenceList(t, rc.file, "", t.TempDir()), "dns")
			p := pod{id: "dns", netns: node.createNamespace(t), caps: map[string]any{"dns": kubelet}}
			res := addAt(t, cni, list, p)
			e := endpointByName(node.dump(t), "dns_"+rc.network)
			if e == nil {
				t.Fatalf("no endpoint dns_%s: %v", rc.network, names(node.dump(t)))
			}
			if !reflect.DeepEqual(e.Dns, want) {
				t.Errorf("endpoint DNS %+v, want the kubelet's %+v", e.Dns, want)
			}
			if got := res.DNS; !slices.Equal(got.Nameservers, want.ServerList) || !slices.Equal(got.Search, want.Search) {
				t.Errorf("result DNS %+v, want the kubelet's", got)
			}
		})
	}
}
