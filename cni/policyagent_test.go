package cni_test

import (
	"context"
	"slices"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
	"github.com/hnsproxy/hnsproxy/sim/simtest"
)

// TestPolicyAgentACLsLeaveCheckDelAndGCAsTheyWere: a network policy agent
// (felix, Azure NPM) writes its ACLs onto the pods' endpoints in place, and
// rewrites them at a policy change, as each sim.PolicyApply leaves the
// list. CHECK still passes (it compares what ADD reported: network,
// namespace, MAC, addresses; never the policies, which others add to), DEL
// deletes the endpoint and releases its address, and GC deletes a leaked
// attachment's endpoint and keeps a valid one with the agent's ACLs on it.
// With HNS answering what it stored, and with every echo variant at once.
func TestPolicyAgentACLsLeaveCheckDelAndGCAsTheyWere(t *testing.T) {
	for _, how := range sim.PolicyApplies() {
		t.Run(string(how), func(t *testing.T) {
			forEachEcho(t, func(t *testing.T, nodeArgs ...string) { policyAgentLifecycle(t, how, nodeArgs...) })
		})
	}
}

func policyAgentLifecycle(t *testing.T, how sim.PolicyApply, nodeArgs ...string) {
	n1 := startNode(t, "n1", append([]string{"--node-ip", "192.168.10.1",
		"--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.1.0/24"}, nodeArgs...)...)
	conf := netConf{version: "1.1.0", mode: "l2bridge", network: "cbr0", subnet: "10.244.1.0/24", socket: n1.socket, dataDir: t.TempDir()}
	rt := newRuntime(t, conf)
	pods := []pod{{id: "pod1", netns: n1.createNamespace(t)}, {id: "pod2", netns: n1.createNamespace(t)}, {id: "pod3", netns: n1.createNamespace(t)}}
	for _, p := range pods {
		rt.add(t, p)
	}
	before := n1.dump(t)
	ctx := context.Background()
	for _, set := range [][]hnslb.EndpointPolicy{simtest.AgentACLs("np", 3), simtest.AgentACLs("np", 1)} {
		for _, p := range pods {
			req := remote.EndpointPoliciesRequest{Endpoint: endpointByName(before, p.endpointName("cbr0")).ID, Apply: string(how), Policies: set}
			if err := n1.client.ApplyEndpointPolicies(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := n1.dump(t)
	for _, p := range pods {
		e := endpointByName(s, p.endpointName("cbr0"))
		if n := len(policies[map[string]any](t, e, hnslb.EndpointPolicyACL)); n == 0 {
			t.Fatalf("%s: the agent's ACLs are not on the endpoint", p.id)
		}
		if err := rt.check(p); err != nil {
			t.Errorf("CHECK %s with another agent's ACLs: %v", p.id, err)
		}
	}
	ip1 := endpointByName(s, "pod1_cbr0").IP()
	rt.del(t, pods[0])
	s = n1.dump(t)
	if endpointByName(s, "pod1_cbr0") != nil {
		t.Errorf("DEL left pod1's endpoint")
	}
	if got := allocated(t, conf.dataDir); slices.Contains(got, ip1) || len(got) != 2 {
		t.Errorf("after DEL of pod1 host-local holds %v", got)
	}
	if err := rt.cni.GCNetworkList(ctx, rt.list, &libcni.GCArgs{
		ValidAttachments: []types.GCAttachment{{ContainerID: "pod2", IfName: "eth0"}},
	}); err != nil {
		t.Fatalf("GC: %v", err)
	}
	s = n1.dump(t)
	if got := names(s); !slices.Equal(got, []string{"pod2_cbr0"}) {
		t.Fatalf("after GC endpoints %v, want [pod2_cbr0]", got)
	}
	want := 3 // the second set, which replaced the first
	if how == sim.PolicyApplyAppend {
		want = 5 + 3
	}
	if n := len(policies[map[string]any](t, endpointByName(s, "pod2_cbr0"), hnslb.EndpointPolicyACL)); n != want {
		t.Errorf("GC left pod2 with %d ACLs, want the agent's %d", n, want)
	}
	if err := rt.check(pods[1]); err != nil {
		t.Errorf("CHECK pod2 after GC: %v", err)
	}
}
