package cni_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// execPlugin runs hnscni as a runtime would, without libcni, so that any
// environment and stdin can be sent. It returns the exit code and the
// decoded error (nil on success).
func execPlugin(t *testing.T, env map[string]string, stdin []byte) (int, *types.Error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "hnscni"))
	cmd.Env = []string{"CNI_PATH=" + binDir, "CNI_IFNAME=eth0", "CNI_CONTAINERID=c1"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Run()
	if err == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatal(err)
	}
	var te types.Error
	if jerr := json.Unmarshal(stdout.Bytes(), &te); jerr != nil {
		t.Fatalf("exit %d without a CNI error on stdout: %q", ee.ExitCode(), stdout.String())
	}
	return ee.ExitCode(), &te
}

// TestBadInputFailsCleanly sends bad configurations and environments: each
// gets a CNI error with its proper code, a non-zero exit, and leaves neither
// an endpoint nor an address behind.
func TestBadInputFailsCleanly(t *testing.T) {
	n1 := startNode(t, "n1", "--node-ip", "192.168.30.1",
		"--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.3.0/24")
	good := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.3.0/24", socket: n1.socket, dataDir: t.TempDir()}
	ns := n1.createNamespace(t)
	with := func(extra map[string]any) []byte {
		c := good
		c.extra = extra
		return c.pluginJSON(t)
	}
	withoutIPAM := func() []byte {
		var m map[string]any
		_ = json.Unmarshal(with(map[string]any{"network": "absent"}), &m)
		delete(m, "ipam")
		b, _ := json.Marshal(m)
		return b
	}
	for _, c := range []struct {
		name  string
		env   map[string]string
		stdin []byte
		code  uint
	}{
		{"malformed JSON", nil, []byte(`{"cniVersion": "1.1.0", "name": `), types.ErrDecodingFailure},
		{"config not an object", nil, []byte(`{"cniVersion":"1.1.0","name":"pods","type":"hnscni","mode":7}`), types.ErrDecodingFailure},
		{"unknown mode", nil, with(map[string]any{"mode": "transparent"}), types.ErrInvalidNetworkConfig},
		{"no mode to create a missing network with", nil, with(map[string]any{"mode": "", "network": "absent"}), types.ErrInvalidNetworkConfig},
		{"neither network nor name", nil, []byte(strings.Replace(string(with(map[string]any{"network": ""})), `"name":"pods"`, `"name":""`, 1)), types.ErrInvalidNetworkConfig},
		{"no ipam for a missing network", nil, withoutIPAM(), types.ErrInvalidNetworkConfig},
		{"a typo'd field", nil, with(map[string]any{"serviceCIRD": "10.96.0.0/12"}), types.ErrInvalidNetworkConfig},
		{"a policy with a bad CIDR", nil, with(map[string]any{"policies": []any{map[string]any{"name": "EndpointPolicy", "value": map[string]any{"Type": "ROUTE", "DestinationPrefix": "services"}}}}), types.ErrInvalidNetworkConfig},
		{"bad cluster CIDR", nil, with(map[string]any{"clusterCIDR": "10.244.0.0/33"}), types.ErrInvalidNetworkConfig},
		{"bad service CIDR", nil, with(map[string]any{"serviceCIDR": "services"}), types.ErrInvalidNetworkConfig},
		{"bad port mapping", nil, with(map[string]any{"runtimeConfig": map[string]any{"portMappings": []map[string]any{{"hostPort": 80, "containerPort": 80, "protocol": "sctp"}}}}), types.ErrInvalidNetworkConfig},
		{"mode does not match the network", nil, with(map[string]any{"mode": "overlay"}), types.ErrInvalidNetworkConfig},
		{"bad hnsEndpoint", nil, with(map[string]any{"hnsEndpoint": "tcp://127.0.0.1:1"}), types.ErrInvalidNetworkConfig},
		{"unsupported CNI version", nil, with(map[string]any{"cniVersion": "2.0.0"}), types.ErrIncompatibleCNIVersion},
		{"unknown CNI_COMMAND", map[string]string{"CNI_COMMAND": "FROB"}, good.pluginJSON(t), types.ErrInvalidEnvironmentVariables},
		{"path-like container ID", map[string]string{"CNI_CONTAINERID": "../../etc/passwd"}, good.pluginJSON(t), types.ErrInvalidEnvironmentVariables},
		{"bad interface name", map[string]string{"CNI_IFNAME": "eth0/../x"}, good.pluginJSON(t), types.ErrInvalidEnvironmentVariables},
		{"netns not a GUID", map[string]string{"CNI_NETNS": "/var/run/netns/x"}, good.pluginJSON(t), types.ErrInvalidNetNS},
		{"netns unknown", map[string]string{"CNI_NETNS": "0b9e1f9e-5a5e-4c57-9c0b-000000000000"}, good.pluginJSON(t), types.ErrInvalidNetNS},
		{"no HNS off Windows", nil, with(map[string]any{"hnsEndpoint": ""}), types.ErrPluginNotAvailable},
		{"HNS unreachable", nil, with(map[string]any{"hnsEndpoint": "unix://" + filepath.Join(shortDir(t), "none.sock")}), types.ErrTryAgainLater},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"CNI_COMMAND": "ADD", "CNI_NETNS": ns}
			for k, v := range c.env {
				env[k] = v
			}
			exit, err := execPlugin(t, env, c.stdin)
			if exit == 0 || err == nil {
				t.Fatalf("exit %d, error %v; want a failure", exit, err)
			}
			if err.Code != c.code || err.Msg == "" {
				t.Errorf("error %+v, want code %d with a message", err, c.code)
			}
		})
	}
	if s := n1.dump(t); len(s.Endpoints) != 0 {
		t.Errorf("bad input left endpoints %v", names(s))
	}
	if got := allocated(t, good.dataDir); len(got) != 0 {
		t.Errorf("bad input left addresses %v", got)
	}
}

// TestFailedAddIsUndone makes HNS fail at each step after IPAM and checks
// that ADD reports it and leaves nothing behind.
func TestFailedAddIsUndone(t *testing.T) {
	n1, conf := l2bridgeNode(t, 4)
	rt := newRuntime(t, conf)
	for _, c := range []struct {
		op, code, committed string
		want                uint
	}{
		{"CreateEndpoint", "0x6ba", "0", types.ErrTryAgainLater},       // HNS unavailable: retry
		{"CreateEndpoint", "0x5b4", "1", types.ErrTryAgainLater},       // timed out, but created
		{"AddNamespaceEndpoint", "0x57", "0", types.ErrInternal},       // attach refused: endpoint must go
		{"AddNamespaceEndpoint", "0x6ba", "0", types.ErrTryAgainLater}, // attach unavailable
		{"AddNamespaceEndpoint", "0x5b4", "1", types.ErrTryAgainLater}, // timed out, but attached
	} {
		n1.hnssim(t, "faults", "--error-rate", c.op+"=1", "--error-code", c.code, "--committed", c.committed)
		p := pod{id: "p-" + c.op, netns: n1.createNamespace(t)}
		_, err := rt.cni.AddNetworkList(context.Background(), rt.list, p.rt())
		if cniCode(err) != int(c.want) {
			t.Errorf("%s failing with %s: ADD error %v, want code %d", c.op, c.code, err, c.want)
		}
		n1.hnssim(t, "faults")
		if s := n1.dump(t); len(s.Endpoints) != 0 {
			t.Errorf("%s failing: endpoints left %v", c.op, names(s))
		}
		if got := allocated(t, conf.dataDir); len(got) != 0 {
			t.Errorf("%s failing: addresses left %v", c.op, got)
		}
	}
	// With the faults gone the same runtime succeeds.
	rt.add(t, pod{id: "ok", netns: n1.createNamespace(t)})
	if got := allocated(t, conf.dataDir); len(got) != 1 {
		t.Errorf("addresses after a good ADD: %v", got)
	}
}

// TestNetworkCreatedWhenMissing lets ADD create the HNS network from the
// IPAM subnet on a node without one, and reuse it afterwards.
func TestNetworkCreatedWhenMissing(t *testing.T) {
	n1 := startNode(t, "n1", "--node-ip", "192.168.50.1")
	conf := netConf{version: "1.1.0", mode: "overlay", network: "vxlan0", subnet: "10.244.5.0/24", socket: n1.socket, dataDir: t.TempDir()}

	// Overlay needs the node's provider address from somewhere.
	rt := newRuntime(t, conf)
	_, err := rt.cni.AddNetworkList(context.Background(), rt.list, pod{id: "x", netns: n1.createNamespace(t)}.rt())
	if cniCode(err) != int(types.ErrInvalidNetworkConfig) {
		t.Fatalf("overlay ADD without a provider address: %v, want code 7", err)
	}
	if got := allocated(t, conf.dataDir); len(got) != 0 {
		t.Errorf("addresses left %v", got)
	}
	if s := n1.dump(t); len(s.Networks) != 0 {
		t.Errorf("a refused ADD created networks %+v", s.Networks)
	}

	conf.extra = map[string]any{"providerAddress": "192.168.50.1"}
	rt = newRuntime(t, conf)
	for _, id := range []string{"p1", "p2"} {
		rt.add(t, pod{id: id, netns: n1.createNamespace(t)})
	}
	s := n1.dump(t)
	if len(s.Networks) != 1 {
		t.Fatalf("networks %+v, want one", s.Networks)
	}
	nw := s.Networks[0]
	if nw.Name != "vxlan0" || nw.Type != hnslb.NetworkTypeOverlay || nw.ProviderAddress() != "192.168.50.1" ||
		len(nw.Ipams) != 1 || nw.Ipams[0].Subnets[0].IpAddressPrefix != "10.244.5.0/24" {
		t.Errorf("created network %+v", nw)
	}
	if got := names(s); !slices.Equal(got, []string{"p1_vxlan0", "p2_vxlan0"}) {
		t.Errorf("endpoints %v", got)
	}
	for _, e := range s.Endpoints {
		if e.HostComputeNetwork != nw.ID || e.ProviderAddress() != "192.168.50.1" {
			t.Errorf("endpoint %s on %s with PA %q", e.Name, e.HostComputeNetwork, e.ProviderAddress())
		}
	}
}

// TestStatusIsReadyWhereAddCreatesTheNetwork: STATUS (CNI 1.1) means
// "ready to service ADD", and ADD creates a missing network from mode and
// IPAM; a runtime that gates ADD on STATUS must get the ADD through. Where
// ADD refuses for the missing network (no mode; overlay without
// providerAddress; Calico's "usePodCidr", which takes the network's own
// subnet) STATUS is code 50.
func TestStatusIsReadyWhereAddCreatesTheNetwork(t *testing.T) {
	n1 := startNode(t, "n1", "--node-ip", "192.168.50.1")
	status := func(c netConf) error {
		rt := newRuntime(t, c)
		return rt.cni.GetStatusNetworkList(context.Background(), rt.list)
	}
	l2 := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.5.0/24", socket: n1.socket, dataDir: t.TempDir()}
	noMode := l2
	noMode.mode = ""
	overlayNoPA := l2
	overlayNoPA.mode, overlayNoPA.network = "overlay", "vxlan0"
	podCIDR := l2
	podCIDR.extra = map[string]any{"ipam": map[string]any{"type": "host-local", "subnet": "usePodCidr", "dataDir": l2.dataDir}}
	for what, c := range map[string]netConf{"no mode": noMode, "overlay without providerAddress": overlayNoPA, "usePodCidr": podCIDR} {
		if err := status(c); cniCode(err) != int(types.ErrPluginNotAvailable) {
			t.Errorf("STATUS with the network missing, %s: %v, want code 50", what, err)
		}
	}

	if err := status(l2); err != nil {
		t.Errorf("STATUS before the ADD that creates the network: %v (code %d)", err, cniCode(err))
	}
	newRuntime(t, l2).add(t, pod{id: "p1", netns: n1.createNamespace(t)})
	if s := n1.dump(t); len(s.Networks) != 1 {
		t.Errorf("networks %+v, want the one ADD created", s.Networks)
	}
}

func TestVersion(t *testing.T) {
	cmd := exec.Command(filepath.Join(binDir, "hnscni"))
	cmd.Env = []string{"CNI_COMMAND=VERSION"}
	cmd.Stdin = strings.NewReader(`{"cniVersion":"1.1.0"}`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		CNIVersion        string   `json:"cniVersion"`
		SupportedVersions []string `json:"supportedVersions"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.SupportedVersions, []string{"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
		t.Errorf("supported versions %v", v.SupportedVersions)
	}
}

// TestAddAgainReplacesStaleAttachment repeats an ADD whose first run the
// runtime lost track of (e.g. it crashed): the old endpoint and address
// give way, and exactly one of each remains.
func TestAddAgainReplacesStaleAttachment(t *testing.T) {
	n1, conf := l2bridgeNode(t, 6)
	p := pod{id: "again", netns: n1.createNamespace(t)}
	first := newRuntime(t, conf).add(t, p)
	rt := newRuntime(t, conf)
	second := rt.add(t, p)
	s := n1.dump(t)
	if got := names(s); !slices.Equal(got, []string{"again_cbr0"}) {
		t.Fatalf("endpoints %v", got)
	}
	if got := allocated(t, conf.dataDir); len(got) != 1 || got[0] != endpointByName(s, "again_cbr0").IP() {
		t.Errorf("addresses %v for endpoint address %s (first ADD %v, second %v)", got, endpointByName(s, "again_cbr0").IP(), first.IPs[0].Address, second.IPs[0].Address)
	}
	if err := rt.check(p); err != nil {
		t.Errorf("CHECK: %v", err)
	}
}

// TestHNSEndpointFromEnvironment: without hnsEndpoint in the configuration,
// HNS_ENDPOINT selects hnssim, as it does for hnsproxy.
func TestHNSEndpointFromEnvironment(t *testing.T) {
	n1 := startNode(t, "n1", "--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.7.0/24")
	conf := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.7.0/24", dataDir: t.TempDir(),
		extra: map[string]any{"hnsEndpoint": ""}}
	exit, err := execPlugin(t, map[string]string{"CNI_COMMAND": "STATUS", "HNS_ENDPOINT": "unix://" + n1.socket}, conf.pluginJSON(t))
	if exit != 0 || err != nil {
		t.Fatalf("STATUS with HNS_ENDPOINT: exit %d, %+v", exit, err)
	}
	ns := n1.createNamespace(t)
	exit, err = execPlugin(t, map[string]string{"CNI_COMMAND": "ADD", "CNI_NETNS": ns, "HNS_ENDPOINT": "unix://" + n1.socket}, conf.pluginJSON(t))
	if exit != 0 || err != nil {
		t.Fatalf("ADD with HNS_ENDPOINT: exit %d, %+v", exit, err)
	}
	if got := names(n1.dump(t)); !slices.Equal(got, []string{"c1_cbr0"}) {
		t.Errorf("endpoints %v", got)
	}
}

// TestStateSurvivesRestart restarts hnssim with --state: like HNS across a
// service restart it keeps its objects, so pods wired before stay wired,
// CHECK passes and DEL cleans up.
func TestStateSurvivesRestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "hns.json")
	n1 := startNode(t, "n1", "--state", state, "--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.8.0/24")
	conf := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.8.0/24", socket: n1.socket, dataDir: t.TempDir()}
	rt := newRuntime(t, conf)
	p := pod{id: "kept", netns: n1.createNamespace(t)}
	rt.add(t, p)
	before := n1.dump(t)

	n1.stop(t)
	// While HNS is down, DEL must fail as "try again later", not succeed.
	if err := rt.cni.DelNetworkList(context.Background(), rt.list, p.rt()); cniCode(err) != int(types.ErrTryAgainLater) {
		t.Errorf("DEL with HNS down: %v, want code %d", err, types.ErrTryAgainLater)
	}
	n1.start(t)

	after := n1.dump(t)
	if len(after.Networks) != 1 || after.Networks[0].ID != before.Networks[0].ID ||
		len(after.Endpoints) != 1 || after.Endpoints[0].ID != before.Endpoints[0].ID {
		t.Fatalf("state not kept across restart:\nbefore %+v\nafter  %+v", before, after)
	}
	if err := rt.check(p); err != nil {
		t.Errorf("CHECK after restart: %v", err)
	}
	rt.del(t, p)
	if got := names(n1.dump(t)); len(got) != 0 {
		t.Errorf("endpoints after DEL: %v", got)
	}
	if got := allocated(t, conf.dataDir); len(got) != 0 {
		t.Errorf("addresses after DEL: %v", got)
	}
}

// TestConcurrentAddsShareOneNewNetwork runs ADDs in parallel on a node
// without the network: exactly one network results, every pod gets its own
// address and endpoint.
func TestConcurrentAddsShareOneNewNetwork(t *testing.T) {
	n1 := startNode(t, "n1")
	conf := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.9.0/24", socket: n1.socket, dataDir: t.TempDir()}
	rt := newRuntime(t, conf)
	const pods = 6
	var ps []pod
	for i := 0; i < pods; i++ {
		ps = append(ps, pod{id: "par" + string(rune('a'+i)), netns: n1.createNamespace(t)})
	}
	errs := make(chan error, pods)
	for _, p := range ps {
		go func() {
			_, err := rt.cni.AddNetworkList(context.Background(), rt.list, p.rt())
			errs <- err
		}()
	}
	for range ps {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	s := n1.dump(t)
	if len(s.Networks) != 1 || len(s.Endpoints) != pods {
		t.Fatalf("%d networks, endpoints %v", len(s.Networks), names(s))
	}
	seen := map[string]bool{}
	for _, e := range s.Endpoints {
		if seen[e.IP()] || e.HostComputeNamespace == "" {
			t.Errorf("endpoint %s: address %s repeated or not attached", e.Name, e.IP())
		}
		seen[e.IP()] = true
	}
	if got := allocated(t, conf.dataDir); len(got) != pods {
		t.Errorf("host-local holds %v", got)
	}
}

// TestAddOnAnAddressHNSRefuses: whichever code HNS answers for the pod's
// address (each one on record), ADD names what holds it. A service proxy's
// remote endpoint for a pod that had the address on another node
// (kubernetes/kubernetes#130963, a build with no local and remote endpoint
// on one address) is "try again later", and the error names how to remove
// it, for nothing deletes one its proxy no longer counts (kube-proxy's left
// on a node moved to hnsproxy, which deletes only its own); nothing holding
// it is HNS taking the address for invalid or reserved. Either way nothing
// is left behind, and once the address is free the ADD succeeds.
func TestAddOnAnAddressHNSRefuses(t *testing.T) {
	ctx := context.Background()
	for _, code := range []string{"0xb7", "0x1392", "0x803b002f"} {
		t.Run(code, func(t *testing.T) {
			n1, conf, rt, nw := oneAddressNode(t, code)
			held, err := n1.client.CreateEndpoint(ctx, nw.ID, &hnslb.Endpoint{Name: "proxy-remote", Flags: hnslb.EndpointFlagsRemoteEndpoint,
				IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.6.10"}}})
			if err != nil {
				t.Fatal(err)
			}
			refusedAdd := func(id string, want uint, says string) {
				t.Helper()
				_, err := rt.cni.AddNetworkList(ctx, rt.list, pod{id: id, netns: n1.createNamespace(t)}.rt())
				if cniCode(err) != int(want) || !strings.Contains(err.Error(), says) {
					t.Errorf("ADD: %v, want code %d saying %q", err, want, says)
				}
				if s := n1.dump(t); slices.ContainsFunc(s.Endpoints, func(e hnslb.Endpoint) bool { return !e.IsRemote() }) {
					t.Errorf("endpoints left: %v", names(s))
				}
				if got := allocated(t, conf.dataDir); len(got) != 0 {
					t.Errorf("addresses left: %v", got)
				}
			}
			refusedAdd("held", types.ErrTryAgainLater, "remote endpoint "+held.ID)
			refusedAdd("held", types.ErrTryAgainLater, "hnsdiag delete endpoints "+held.ID)
			// The refusal passes on HNS's code: this run met the one it is for.
			refusedAdd("held", types.ErrTryAgainLater, "("+code+")")
			if err := n1.client.DeleteEndpoint(ctx, held.ID); err != nil {
				t.Fatal(err)
			}
			n1.hnssim(t, "faults", "--reserved-address", "10.244.6.10")
			refusedAdd("reserved", types.ErrInternal, "no endpoint on the network holds it")
			n1.hnssim(t, "faults")
			rt.add(t, pod{id: "ok", netns: n1.createNamespace(t)})
		})
	}
}

// oneAddressNode is an hnssim node whose HNS refuses a taken address with
// code, and a runtime whose host-local hands out one address, 10.244.6.10.
func oneAddressNode(t *testing.T, code string) (*simNode, netConf, *runtime, *hnslb.Network) {
	t.Helper()
	n1 := startNode(t, "n1", "--profile", "ws2025", "--node-ip", "192.168.60.1", "--address-taken-code", code,
		"--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.6.0/24")
	conf := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.6.0/24", socket: n1.socket, dataDir: t.TempDir(),
		extra: map[string]any{"ipam": map[string]any{
			"type": "host-local", "dataDir": "",
			"ranges": [][]map[string]string{{{"subnet": "10.244.6.0/24", "rangeStart": "10.244.6.10", "rangeEnd": "10.244.6.10"}}},
		}}}
	conf.extra["ipam"].(map[string]any)["dataDir"] = conf.dataDir
	rt := newRuntime(t, conf)
	nw, err := n1.client.GetNetworkByName(context.Background(), "cbr0")
	if err != nil {
		t.Fatal(err)
	}
	return n1, conf, rt, nw
}

// TestAddRemovesAnEndpointLeftAfterItsDEL: an endpoint create HNS applied
// after its plugin had answered and after the runtime's DEL (a hung call,
// or a plugin the runtime killed) holds an address host-local has released
// and hands the next pod. ADD removes that endpoint, which hnscni named and
// no namespace holds, and wires the pod on the address. An endpoint a
// namespace holds, or one hnscni did not make, stays, and ADD names it.
func TestAddRemovesAnEndpointLeftAfterItsDEL(t *testing.T) {
	ctx := context.Background()
	const addr = "10.244.6.10"
	ourMAC := "0E-2A-0A-F4-06-0A" // what hnscni derives from addr
	for _, c := range []struct {
		name, leftName, mac string
		attached, removed   bool
	}{
		{name: "left by a late create", leftName: "gone_cbr0", mac: ourMAC, removed: true},
		{name: "attached to a namespace", leftName: "gone_cbr0", mac: ourMAC, attached: true},
		{name: "HNS's MAC", leftName: "gone_cbr0", mac: "00-15-5D-0A-F4-06"},
		{name: "another agent's name", leftName: "host-vnic", mac: ourMAC},
	} {
		t.Run(c.name, func(t *testing.T) {
			n1, conf, rt, nw := oneAddressNode(t, "0x1392")
			left, err := n1.client.CreateEndpoint(ctx, nw.ID, &hnslb.Endpoint{Name: c.leftName, MacAddress: c.mac,
				IpConfigurations: []hnslb.IPConfig{{IpAddress: addr, PrefixLength: 24}}})
			if err != nil {
				t.Fatal(err)
			}
			if c.attached {
				if err := n1.client.AddNamespaceEndpoint(ctx, n1.createNamespace(t), left.ID); err != nil {
					t.Fatal(err)
				}
			}
			res, err := rt.cni.AddNetworkList(ctx, rt.list, pod{id: "new", netns: n1.createNamespace(t)}.rt())
			gone := !slices.ContainsFunc(n1.dump(t).Endpoints, func(e hnslb.Endpoint) bool { return strings.EqualFold(e.ID, left.ID) })
			if gone != c.removed {
				t.Errorf("the endpoint holding the address removed: %v, want %v", gone, c.removed)
			}
			if !c.removed {
				if cniCode(err) != int(types.ErrInternal) || !strings.Contains(err.Error(), left.ID) {
					t.Errorf("ADD: %v; want code %d naming %s", err, types.ErrInternal, left.ID)
				}
				if got := allocated(t, conf.dataDir); len(got) != 0 {
					t.Errorf("addresses left: %v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ADD: %v", err)
			}
			cur, err := current.NewResultFromResult(res)
			if err != nil {
				t.Fatal(err)
			}
			if len(cur.IPs) != 1 || cur.IPs[0].Address.IP.String() != addr {
				t.Errorf("the pod got %v; want %s", cur.IPs, addr)
			}
		})
	}
}
