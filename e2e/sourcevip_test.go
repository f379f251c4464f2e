//go:build e2e

package e2e

import (
	"context"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// deployConfig is deploy/base/configmap.yaml's config.conf as an overlay
// cluster runs it: with the one cluster-wide edit its comment names for
// overlay (winkernel.networkName; the rig's overlay network is vxlan0,
// where Flannel's is flannel.4096) and no source VIP, plus what the
// test rig must set per node because its nodes share one machine (loopback
// health and metrics addresses, the rig's kubeconfig).
func deployConfig(t *testing.T) func(framework.NodeSpec, string, string, string) ([]byte, error) {
	t.Helper()
	raw, err := os.ReadFile("../deploy/base/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	shipped := cm.Data["config.conf"]
	return func(_ framework.NodeSpec, healthz, metrics, kubeconfig string) ([]byte, error) {
		var conf map[string]any
		if err := yaml.Unmarshal([]byte(shipped), &conf); err != nil {
			return nil, err
		}
		winkernel, _ := conf["winkernel"].(map[string]any)
		if _, set := winkernel["sourceVip"]; set {
			return nil, errorf("deploy/base/configmap.yaml sets winkernel.sourceVip; the test wants the shipped file without one")
		}
		winkernel["networkName"] = "vxlan0"
		conf["clientConnection"].(map[string]any)["kubeconfig"] = kubeconfig
		conf["healthzBindAddress"], conf["metricsBindAddress"] = healthz, metrics
		return yaml.Marshal(conf)
	}
}

// TestSourceVIPFromCNIIPAM: two overlay nodes run from deploy/'s ConfigMap,
// with no per-node setting and no source VIP. Each reserves its own source
// VIP through the node's CNI IPAM (host-local, through hnscni's
// configuration): the two differ, each is in its node's pod subnet and is
// no pod's address (neither the pods wired before nor after), the load
// balancers use it, a restart keeps it, and --cleanup gives it back to
// host-local.
func TestSourceVIPFromCNIIPAM(t *testing.T) {
	ctx := context.Background()
	spec := overlaySpec
	spec.ProxyConfig = deployConfig(t)
	spec.SourceVIPFromIPAM = true
	c, _, svc := webOnTwoNodes(t, spec)

	vips := map[string]netip.Addr{}
	for _, n := range c.Nodes {
		vips[n.Name()] = programmedSourceVIP(t, n, svc.Spec.ClusterIP)
		late := wire(t, n, "late", 3)
		for _, p := range n.Pods {
			if p.IP == vips[n.Name()] {
				t.Errorf("node %s: pod %s has the source VIP %s", n.Name(), p.Name, p.IP)
			}
		}
		if len(late) != 3 || !netip.MustParsePrefix(n.Spec.PodCIDR).Contains(vips[n.Name()]) || !n.IPAMHolds(vips[n.Name()]) {
			t.Errorf("node %s: source VIP %s, want an address of %s that host-local holds", n.Name(), vips[n.Name()], n.Spec.PodCIDR)
		}
	}
	x, y := c.Nodes[0], c.Nodes[1]
	if vips[x.Name()] == vips[y.Name()] {
		t.Errorf("both nodes have the source VIP %s", vips[x.Name()])
	}

	if err := x.Proxy.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if got := programmedSourceVIP(t, x, svc.Spec.ClusterIP); got != vips[x.Name()] {
		t.Errorf("after a restart node %s uses the source VIP %s, want %s", x.Name(), got, vips[x.Name()])
	}

	if err := x.Proxy.Stop(); err != nil {
		t.Fatal(err)
	}
	if out, err := x.Proxy.Cleanup(ctx); err != nil {
		t.Fatalf("hnsproxy --cleanup: %v\n%s", err, out)
	}
	if x.IPAMHolds(vips[x.Name()]) {
		t.Errorf("host-local still holds %s after --cleanup", vips[x.Name()])
	}
	snap, err := x.Sim.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range snap.Endpoints {
		if ep.IP() == vips[x.Name()].String() {
			t.Errorf("the source VIP endpoint %s is left after --cleanup", ep.ID)
		}
	}
	if _, err := os.Stat(x.StateDir() + "/source-vip.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("source VIP record after --cleanup: %v, want it removed", err)
	}
}

// programmedSourceVIP waits for node n's load balancer of vip with both
// backends and a local endpoint carrying its source VIP, and returns that
// source VIP.
func programmedSourceVIP(t *testing.T, n *framework.Node, vip string) netip.Addr {
	t.Helper()
	var got netip.Addr
	err := framework.Poll(context.Background(), framework.ConvergeWait, 200*time.Millisecond, func(ctx context.Context) error {
		snap, err := n.Sim.Dump(ctx)
		if err != nil {
			return err
		}
		for _, lb := range snap.LoadBalancers {
			if !slices.Contains(lb.FrontendVIPs, vip) || len(lb.HostComputeEndpoints) != 2 {
				continue
			}
			for _, ep := range snap.Endpoints {
				if !ep.IsRemote() && ep.IP() == lb.SourceVIP {
					got = netip.MustParseAddr(lb.SourceVIP)
					return nil
				}
			}
			return errorf("load balancer %s has source VIP %q, and no local endpoint carries it", lb.ID, lb.SourceVIP)
		}
		return errorf("no load balancer for %s with both backends yet", vip)
	})
	if err != nil {
		t.Fatalf("node %s: %v", n.Name(), err)
	}
	return got
}
