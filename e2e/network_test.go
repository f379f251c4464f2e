//go:build e2e

package e2e

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestHNSNetworkReplaced: on an overlay node the CNI deletes the HNS
// network and makes it again under its name (its remote endpoints, source
// VIP and pods' endpoints go with the old one), and a pod is wired on the
// new one. The real hnsproxy finds the load balancer's new pod on another
// network, reads the network by name, and exits saying it was replaced.
// Started again, as the kubelet would, it programs the new network: the
// pod's load balancer, and the remote endpoints on the new network's ID.
func TestHNSNetworkReplaced(t *testing.T) {
	ctx := context.Background()
	c, web, first := webOnTwoNodes(t, overlaySpec)
	x, y := c.Nodes[0], c.Nodes[1]
	sims := x.Sim.Client
	// The old network is fully programmed first. An endpoint create that
	// falls between the CNI's delete and its create finds no network at
	// all, and hnsproxy then rightly exits saying the network is gone (the
	// soak accepts either reading); this test is about the replacement.
	expectLBs(t, c, x, first, lb("ClusterIP", frontend(first.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"),
		backends(local(onNode(web, x.Name())...), remote(onNode(web, y.Name())...))...))

	old, err := sims.GetNetworkByName(ctx, c.Spec.HNSNetwork())
	if err != nil {
		t.Fatal(err)
	}
	if err := sims.DeleteNetwork(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	doc := *old
	doc.ID = ""
	again, err := sims.CreateNetwork(ctx, &doc)
	if err != nil {
		t.Fatal(err)
	}
	fresh := wire(t, x, "fresh", 1)
	svc := apply(t, c, service("web", "after", "", 81, 8080), framework.Backends(append(fresh, onNode(web, y.Name())...)))
	if !x.Proxy.WaitExit(time.Minute) {
		t.Fatal("hnsproxy still runs a minute after its network was replaced")
	}
	log, err := os.ReadFile(x.Proxy.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"was replaced", old.ID, again.ID} {
		if !strings.Contains(string(log), want) {
			t.Errorf("hnsproxy's log does not say %q; it ends:\n%s", want, tail(string(log), 15))
		}
	}

	if err := x.Proxy.Start(ctx); err != nil {
		t.Fatal(err)
	}
	expectLBs(t, c, x, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 81, "TCP", 8080), flags("DSR"),
		backends(local(fresh...), remote(onNode(web, y.Name())...))...))
	eps, err := sims.ListEndpointsOfNetwork(ctx, again.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range onNode(web, y.Name()) {
		if !hasRemote(eps, p.IP.String()) {
			t.Errorf("no remote endpoint for %s on the new network %s", p.IP, again.ID)
		}
	}
}

// hasRemote reports whether eps has a remote endpoint with ip.
func hasRemote(eps []hnslb.Endpoint, ip string) bool {
	for _, e := range eps {
		if e.IsRemote() && e.IP() == ip {
			return true
		}
	}
	return false
}

// TestMovedToAnotherNetwork: the real hnsproxy restarted with another
// --network-name, its old network left in place (an operator's move from
// one CNI network to another), deletes the remote endpoints it made on the
// old network, which its state file recorded there, and leaves the pods'
// endpoints on it alone; it makes its remote endpoints on the new one.
func TestMovedToAnotherNetwork(t *testing.T) {
	ctx := context.Background()
	c, web, _ := webOnTwoNodes(t, l2bridgeSpec)
	x, y := c.Nodes[0], c.Nodes[1]
	sims := x.Sim.Client
	old, err := sims.GetNetworkByName(ctx, c.Spec.HNSNetwork())
	if err != nil {
		t.Fatal(err)
	}
	remoteOn := func(network string) ([]hnslb.Endpoint, error) {
		eps, err := sims.ListEndpointsOfNetwork(ctx, network)
		return slices.DeleteFunc(eps, func(ep hnslb.Endpoint) bool { return !ep.IsRemote() }), err
	}
	remotePod := onNode(web, y.Name())[0].IP.String()
	err = framework.Poll(ctx, framework.ConvergeWait, 200*time.Millisecond, func(context.Context) error {
		if eps, err := remoteOn(old.ID); err != nil || !hasRemote(eps, remotePod) {
			return errorf("no remote endpoint for %s on %s yet (%v)", remotePod, old.Name, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	localBefore, err := sims.ListEndpointsOfNetwork(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}

	if err := x.Proxy.Stop(); err != nil {
		t.Fatal(err)
	}
	moved, err := sims.CreateNetwork(ctx, &hnslb.Network{Name: "moved", Type: old.Type, Ipams: old.Ipams})
	if err != nil {
		t.Fatal(err)
	}
	x.Proxy.SetFlag("network-name", moved.Name)
	if err := x.Proxy.Start(ctx); err != nil {
		t.Fatal(err)
	}
	err = framework.Poll(ctx, framework.ConvergeWait, 200*time.Millisecond, func(context.Context) error {
		left, err := remoteOn(old.ID)
		if err != nil || len(left) > 0 {
			return errorf("%d remote endpoints still on %s (%v)", len(left), old.Name, err)
		}
		if eps, err := remoteOn(moved.ID); err != nil || !hasRemote(eps, remotePod) {
			return errorf("no remote endpoint for %s on %s yet (%v)", remotePod, moved.Name, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := sims.ListEndpointsOfNetwork(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range localBefore {
		if !ep.IsRemote() && !slices.ContainsFunc(after, func(a hnslb.Endpoint) bool { return a.ID == ep.ID }) {
			t.Errorf("the pod endpoint %s (%s) on %s is gone", ep.ID, ep.IP(), old.Name)
		}
	}
	log, err := os.ReadFile(x.Proxy.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "on a network it no longer uses") {
		t.Errorf("hnsproxy's log does not say it deletes endpoints on the old network; it ends:\n%s", tail(string(log), 15))
	}
}
