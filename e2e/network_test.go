//go:build e2e

package e2e

import (
	"context"
	"os"
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
