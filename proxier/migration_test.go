package proxier

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// asKubeProxyLeftIt rewrites the node's HNS as kube-proxy's winkernel
// (v1.36) leaves it for the same Services, and removes hnsproxy's state
// file: winkernel deletes every load balancer when it starts, then makes
// its remote endpoints without a name (same MAC, flag and provider
// address) and its load balancers with the same documents over them. The
// source VIP endpoint is winkernel's alike (local, the host MAC, no name).
// With sourceVIP set, kube-proxy ran with that --source-vip instead
// (sig-windows-tools' start script reserves its own, under container ID
// "dummy"): its load balancers carry it, over an endpoint of its own.
func (n *testNode) asKubeProxyLeftIt(sourceVIP string) {
	n.t.Helper()
	n.kubeProxyRan(sourceVIP, true)
	files, _ := filepath.Glob(n.stateFile + "*")
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			n.t.Fatal(err)
		}
	}
}

// kubeProxyRan rewrites the node's HNS as kube-proxy's winkernel does at
// its start, for the Services hnsproxy programmed: every load balancer
// deleted and made again over the same backends (it reuses any endpoint
// it finds on a backend's address). With fresh, the remote endpoints are
// its own (asKubeProxyLeftIt); without, hnsproxy's, as after a rollback.
// Its documents are hnsproxy's but for what winkernel_docs_test.go finds
// different: the remote endpoints' name, the l2bridge source VIP.
func (n *testNode) kubeProxyRan(sourceVIP string, fresh bool) {
	n.t.Helper()
	ctx := context.Background()
	snap := n.hns.Snapshot()
	for _, lb := range snap.LoadBalancers {
		if err := n.hns.DeleteLoadBalancer(ctx, lb.ID); err != nil {
			n.t.Fatal(err)
		}
	}
	newID := map[string]string{}
	for _, ep := range snap.Endpoints {
		newID[ep.ID] = ep.ID
		if !fresh || !ep.IsRemote() {
			continue
		}
		if err := n.hns.DeleteEndpoint(ctx, ep.ID); err != nil {
			n.t.Fatal(err)
		}
		theirs := &hnslb.Endpoint{IpConfigurations: ep.IpConfigurations, MacAddress: ep.MacAddress, Flags: ep.Flags, Policies: ep.Policies}
		got, err := n.hns.CreateEndpoint(ctx, n.networkID, theirs)
		if err != nil {
			n.t.Fatal(err)
		}
		newID[ep.ID] = got.ID
	}
	if sourceVIP != "" {
		vip := &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: sourceVIP}}, MacAddress: n.config.HostMAC}
		if _, err := n.hns.CreateEndpoint(ctx, n.networkID, vip); err != nil {
			n.t.Fatal(err)
		}
	}
	for _, lb := range snap.LoadBalancers {
		theirs := lb
		theirs.ID = ""
		if sourceVIP != "" && lb.SourceVIP == n.config.SourceVIP[intent.IPv4].String() {
			theirs.SourceVIP = sourceVIP
		}
		if n.config.Mode != desired.Overlay {
			// winkernel sets a source VIP on overlay only (its proxier's
			// sourceVip stays empty on l2bridge, proxier.go NewProxier):
			// HNS picks the source address itself.
			theirs.SourceVIP = ""
		}
		theirs.HostComputeEndpoints = nil
		for _, id := range lb.HostComputeEndpoints {
			theirs.HostComputeEndpoints = append(theirs.HostComputeEndpoints, newID[id])
		}
		if _, err := n.hns.CreateLoadBalancer(ctx, &theirs); err != nil {
			n.t.Fatal(err)
		}
	}
}

// switchedFromKubeProxy is a cluster whose node win-1 kube-proxy
// programmed for flowServices (asKubeProxyLeftIt with sourceVIP), stopped
// for hnsproxy's first start; before is what hnsproxy programs there.
func switchedFromKubeProxy(t *testing.T, mode desired.NetworkMode, sourceVIP string) (c *simCluster, n *testNode, before []lbView) {
	c = newSimCluster(t, clusterSpec{profile: "ws2022", mode: mode, nodes: threeNodes()})
	c.apply(flowServices()...)
	c.converge()
	n = c.node("win-1")
	before = n.lbs()
	n.stop()
	n.asKubeProxyLeftIt(sourceVIP)
	return c, n, before
}

// TestMigrationFromKubeProxyTakesItsObjectsAsTheyAre: hnsproxy's first
// start on an l2bridge or overlay node kube-proxy programmed for the same Services
// (operators.md, "Replacing kube-proxy-windows node by node") adopts
// kube-proxy's remote endpoints without a write, and on overlay its load
// balancers too, so no frontend stops serving during the switch, and owns
// them from then on. On l2bridge kube-proxy's load balancers carry no
// source VIP, hnsproxy's the node IP (proxier/desired README): each is
// written once, a delete and a create where HNS cannot modify, and none of
// kube-proxy's is left.
func TestMigrationFromKubeProxyTakesItsObjectsAsTheyAre(t *testing.T) {
	for _, mode := range []desired.NetworkMode{desired.L2Bridge, desired.Overlay} {
		t.Run(string(mode), func(t *testing.T) {
			c, n, before := switchedFromKubeProxy(t, mode, "")
			kubeProxys := n.hns.Snapshot()
			n.hns.ResetCounters()
			n.start()
			c.converge()
			calls := n.hns.Counters()
			wantRewrites := 0
			if mode == desired.L2Bridge {
				wantRewrites = len(kubeProxys.LoadBalancers)
			}
			if w := calls.Writes(); w != 2*wantRewrites ||
				calls.CountResult(sim.OpDeleteLoadBalancer, sim.ResultOK) != wantRewrites {
				t.Errorf("the switch made %d HNS writes, want %d load balancers deleted and made again and nothing else (%+v)",
					w, wantRewrites, calls.Calls)
			}
			if after := n.lbs(); !reflect.DeepEqual(before, after) {
				t.Errorf("load balancers changed across the switch:\nbefore %+v\nafter  %+v", before, after)
			}
			owned, err := reconciler.ReadOwned(n.stateFile)
			if err != nil {
				t.Fatal(err)
			}
			after := n.hns.Snapshot()
			for _, lb := range after.LoadBalancers {
				if !owned.LoadBalancer(lb.ID) {
					t.Errorf("load balancer %s on %v is not hnsproxy's after the switch", lb.ID, lb.FrontendVIPs)
				}
				if mode == desired.L2Bridge && lb.SourceVIP != ip1 {
					t.Errorf("load balancer %s on %v has source VIP %q after the switch, want the node IP %s", lb.ID, lb.FrontendVIPs, lb.SourceVIP, ip1)
				}
			}
			if mode == desired.Overlay && len(after.LoadBalancers) != len(kubeProxys.LoadBalancers) {
				t.Errorf("%d load balancers after the switch, kube-proxy left %d", len(after.LoadBalancers), len(kubeProxys.LoadBalancers))
			}
			for _, lb := range kubeProxys.LoadBalancers {
				if _, err := n.hns.GetLoadBalancerByID(context.Background(), lb.ID); (err == nil) != (mode == desired.Overlay) {
					t.Errorf("kube-proxy's load balancer %s on %v: kept %v, want kept only on overlay", lb.ID, lb.FrontendVIPs, err == nil)
				}
			}
			for _, ep := range kubeProxys.Endpoints {
				if ep.IsRemote() && !owned.RemoteEndpoint(ep.ID) {
					t.Errorf("kube-proxy's remote endpoint %s for %s is not hnsproxy's after the switch", ep.ID, ep.IP())
				}
			}
		})
	}
}

// TestMigrationFromKubeProxyWithAnotherSourceVIP: where hnsproxy's source
// VIP is not kube-proxy's (it reserves its own through the CNI's IPAM,
// operators.md "Overlay: source VIP from the node's CNI IPAM"), every
// load balancer kube-proxy made with its source VIP is replaced by the
// first Sync, none is left on a frontend, and kube-proxy's source VIP
// endpoint stays (a local endpoint: hnsproxy never deletes one it did not
// make; a rollback's kube-proxy takes it up again).
func TestMigrationFromKubeProxyWithAnotherSourceVIP(t *testing.T) {
	const kubeProxysVIP = "10.244.1.3"
	c, n, before := switchedFromKubeProxy(t, desired.Overlay, kubeProxysVIP)
	var theirs []string
	for _, lb := range n.hns.Snapshot().LoadBalancers {
		if lb.SourceVIP == kubeProxysVIP {
			theirs = append(theirs, lb.ID)
		}
	}
	if len(theirs) == 0 {
		t.Fatal("no load balancer of kube-proxy's carries its source VIP")
	}
	n.start()
	c.converge()
	if after := n.lbs(); !reflect.DeepEqual(before, after) {
		t.Errorf("load balancers after the switch:\nbefore %+v\nafter  %+v", before, after)
	}
	snap := n.hns.Snapshot()
	for _, lb := range snap.LoadBalancers {
		if lb.SourceVIP == kubeProxysVIP {
			t.Errorf("kube-proxy's load balancer %s on %v is left", lb.ID, lb.FrontendVIPs)
		}
	}
	kept := false
	for _, ep := range snap.Endpoints {
		kept = kept || !ep.IsRemote() && ep.IP() == kubeProxysVIP
	}
	if !kept {
		t.Error("kube-proxy's source VIP endpoint was deleted")
	}
}

// TestRollbackToKubeProxyAndForwardAgain: after a rollback kube-proxy's
// load balancers sit on every frontend (it deleted hnsproxy's at its
// start), over hnsproxy's remote endpoints, and hnsproxy's state file
// names what is gone (operators.md, "Rollback, per node"). Forward again
// with the token of the first switch, hnsproxy takes kube-proxy's load
// balancers on cluster IPs and node ports, and only reports those on
// ingress and external IPs (ForeignLoadBalancerConflict), which keep
// serving what kube-proxy programmed; with a new --takeover token it takes
// them all.
func TestRollbackToKubeProxyAndForwardAgain(t *testing.T) {
	c := newSimCluster(t, clusterSpec{profile: "ws2022", mode: desired.Overlay, nodes: threeNodes()})
	c.apply(flowServices()...)
	c.converge()
	n := c.node("win-1")
	before := n.lbs()
	n.stop()
	n.kubeProxyRan("", false)
	tenant := map[string]bool{"192.0.2.10": true, "192.0.2.20": true, "192.0.2.30": true, "192.0.2.40": true} // ingress and external IPs
	kubeProxys := map[string]string{}                                                                         // load balancer ID → frontend VIP
	for _, lb := range n.hns.Snapshot().LoadBalancers {
		kubeProxys[lb.ID] = ""
		if len(lb.FrontendVIPs) > 0 {
			kubeProxys[lb.ID] = lb.FrontendVIPs[0]
		}
	}

	n.start()
	c.converge()
	n.eventually("a ForeignLoadBalancerConflict event", func() bool { return n.countEvents(ReasonForeignLoadBalancerConflict) > 0 })
	owned, err := reconciler.ReadOwned(n.stateFile)
	if err != nil {
		t.Fatal(err)
	}
	for id, vip := range kubeProxys {
		if owned.LoadBalancer(id) == tenant[vip] {
			t.Errorf("same token: kube-proxy's load balancer on %q owned %t", vip, owned.LoadBalancer(id))
		}
	}
	if after := n.lbs(); !reflect.DeepEqual(before, after) {
		t.Errorf("same token: load balancers\nbefore %+v\nafter  %+v", before, after)
	}

	n.stop()
	n.takeover = "replace-kube-proxy-2"
	n.start()
	c.converge()
	if owned, err = reconciler.ReadOwned(n.stateFile); err != nil {
		t.Fatal(err)
	}
	for id, vip := range kubeProxys {
		if !owned.LoadBalancer(id) {
			t.Errorf("new token: kube-proxy's load balancer on %q is not hnsproxy's", vip)
		}
	}
	if after := n.lbs(); !reflect.DeepEqual(before, after) {
		t.Errorf("new token: load balancers\nbefore %+v\nafter  %+v", before, after)
	}
}
