package cni_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/containernetworking/cni/libcni"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// sctpHostPort is what containerd's CRI passes for a pod with a TCP and an
// SCTP hostPort: each protocol lowercased (toCNIPortMappings), "sctp"
// included, which an HNS PortMapping cannot express.
var sctpHostPort = map[string]any{"portMappings": []map[string]any{
	{"hostPort": 8080, "containerPort": 80, "protocol": "tcp"},
	{"hostPort": 9000, "containerPort": 9000, "protocol": "sctp"},
}}

// TestPortMappingWithAnUnknownProtocol: win-bridge (Flannel's delegate)
// skips a port mapping whose protocol it cannot express and wires the pod
// with the others (pkg/hns ApplyPortMappingPolicy); so does hnscni under
// its name. Where hnscni refuses such a pod's ADD (its own configuration,
// as sdnbridge refuses it), the runtime's DEL of the sandbox, which carries
// the same runtimeConfig (Flannel replays ADD's), still succeeds: DEL never
// reads port mappings.
func TestPortMappingWithAnUnknownProtocol(t *testing.T) {
	cniPath := dropInDir(t)
	node := startNode(t, "n1", "--node-ip", "172.16.0.2", "--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "192.168.1.0/24")
	t.Setenv("HNS_ENDPOINT", "unix://"+node.socket)
	cni := libcni.NewCNIConfigWithCacheDir([]string{cniPath}, t.TempDir(), nil)
	dataDir := t.TempDir()

	// Flannel declares the capability and hands runtimeConfig to its delegate.
	list := withCapabilities(t, referenceList(t, "flannel-host-gw-win-bridge.json", "1.0.0", dataDir), "portMappings")
	p := pod{id: "sctp", netns: node.createNamespace(t), caps: sctpHostPort}
	addAt(t, cni, list, p)
	e := endpointByName(node.dump(t), "sctp_cbr0")
	if e == nil {
		t.Fatalf("no endpoint sctp_cbr0: %v", names(node.dump(t)))
	}
	pms := policies[hnslb.PortMappingPolicySetting](t, e, hnslb.EndpointPolicyPortMapping)
	if len(pms) != 1 || pms[0] != (hnslb.PortMappingPolicySetting{Protocol: 6, InternalPort: 80, ExternalPort: 8080}) {
		t.Errorf("win-bridge port mappings %+v, want only the TCP one; %s", pms, policyList(e.Policies))
	}
	if err := cni.DelNetworkList(context.Background(), list, p.rt()); err != nil {
		t.Errorf("win-bridge DEL: %v", err)
	}

	conf := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "192.168.1.0/24", socket: node.socket, dataDir: dataDir}
	rt := newRuntime(t, conf)
	p = pod{id: "sctp-own", netns: node.createNamespace(t), caps: sctpHostPort}
	if _, err := rt.cni.AddNetworkList(context.Background(), rt.list, p.rt()); err == nil {
		t.Errorf("hnscni's own configuration: ADD with an SCTP hostPort succeeded, want it refused")
	}
	if err := rt.cni.DelNetworkList(context.Background(), rt.list, p.rt()); err != nil {
		t.Errorf("DEL of the sandbox whose ADD was refused: %v", err)
	}
	if s := node.dump(t); len(s.Endpoints) != 0 || len(allocatedOn(t, dataDir, "cbr0")) != 0 || len(allocated(t, dataDir)) != 0 {
		t.Errorf("left endpoints %v, addresses %v %v", names(s), allocatedOn(t, dataDir, "cbr0"), allocated(t, dataDir))
	}
}

// withCapabilities declares capabilities on a list's plugins, as libcni reads them.
func withCapabilities(t *testing.T, list *libcni.NetworkConfigList, caps ...string) *libcni.NetworkConfigList {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(list.Bytes, &doc); err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, c := range caps {
		declared[c] = true
	}
	for _, p := range doc["plugins"].([]any) {
		p.(map[string]any)["capabilities"] = declared
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return confList(t, raw)
}
