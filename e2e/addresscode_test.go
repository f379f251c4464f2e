//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	hnsremote "github.com/hnsproxy/hnsproxy/sim/remote"
)

// TestLostEndpointReplyUnderAnotherAddressCode: node a's HNS answers an
// endpoint create on a held address with 0x803b002f "invalid or reserved"
// (hnssim --address-taken-code), one of the codes on record for it, and an
// endpoint create on a is applied with its reply lost. The real hnsproxy's
// retry is refused for the address; it looks up what holds it and adopts
// the endpoint its lost create made, so node a serves the Service with its
// remote backend, with one remote endpoint at the pod's address. Taking
// only 0xb7 for a taken address, it retried the create for good and left
// the backend out until a drift repair's listing (an hour away here).
func TestLostEndpointReplyUnderAnotherAddressCode(t *testing.T) {
	ctx := context.Background()
	spec := l2bridgeSpec
	spec.Nodes = slices.Clone(spec.Nodes)
	spec.Nodes[0].HNSSimArgs = []string{"--address-taken-code", "0x803b002f"}
	spec.DriftRepairPeriod = time.Hour // the lookup, not a repair, finds it
	c := framework.StartClusterForTest(t, spec)
	a, b := c.Nodes[0], c.Nodes[1]
	web := wire(t, b, "web", 1)
	setFaults(t, a, hnsremote.FaultsRequest{ErrorRate: map[string]float64{string(sim.OpCreateEndpoint): 1}, Committed: 1,
		Errors: []hnslb.ErrorCode{hnslb.CodeTimeout}})
	svc := apply(t, c, service("web", "web", "", 80, 8080), framework.Backends(web))
	err := framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		st, err := a.Sim.Stats(ctx)
		if err != nil {
			return err
		}
		if st.CountResult(sim.OpCreateEndpoint, "Timeout") == 0 {
			return errorf("no endpoint create has lost its reply yet")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	setFaults(t, a, hnsremote.FaultsRequest{})
	expectLBs(t, c, a, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), backends(remote(web...))...))

	st, err := a.Sim.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lost, refused := st.CountResult(sim.OpCreateEndpoint, "Timeout"), st.CountResult(sim.OpCreateEndpoint, "AddrInvalidOrReserved"); lost == 0 || refused == 0 {
		t.Errorf("endpoint creates on node a: %d with a lost reply, %d refused for the address; want both", lost, refused)
	}
	snap, err := a.Sim.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, ep := range snap.Endpoints {
		if ep.IsRemote() && ep.IP() == web[0].IP.String() {
			held++
		}
	}
	if held != 1 {
		t.Errorf("%d remote endpoints at %s on node a, want 1", held, web[0].IP)
	}
}

// TestRemoteEndpointDeletedBehindTheBack: someone deletes node a's remote
// endpoint for a pod on node b (hnsdiag, another agent). When the Service
// scales up, the real hnsproxy's write meets the endpoint missing, asks HNS
// for it, makes it again and programs the load balancer with both pods at
// its retry, with the drift repair an hour away.
func TestRemoteEndpointDeletedBehindTheBack(t *testing.T) {
	ctx := context.Background()
	spec := l2bridgeSpec
	spec.DriftRepairPeriod = time.Hour
	c := framework.StartClusterForTest(t, spec)
	a, b := c.Nodes[0], c.Nodes[1]
	web := wire(t, b, "web", 1)
	svc := apply(t, c, service("web", "web", "", 80, 8080), framework.Backends(web))
	expectLBs(t, c, a, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), backends(remote(web...))...))
	snap, err := a.Sim.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range snap.Endpoints {
		if ep.IsRemote() && ep.IP() == web[0].IP.String() {
			if err := a.Sim.Client.DeleteEndpoint(ctx, ep.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	more := wire(t, b, "more", 1)
	if err := framework.UpdateEndpoints(ctx, c, svc, framework.Backends(web, more)); err != nil {
		t.Fatal(err)
	}
	expectLBs(t, c, a, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), backends(remote(append(web, more...)...))...))
}

// TestReservedAddressIsReported: node a's HNS refuses the remote endpoint
// for a pod on node b as invalid or reserved while nothing holds the
// address (hnssim --reserved-address). The real hnsproxy programs the
// Service on a with its other backend, warns on the Service
// (HNSEndpointAddressRefused, saying no endpoint holds the address), and
// once HNS takes the address programs the pod too.
func TestReservedAddressIsReported(t *testing.T) {
	ctx := context.Background()
	c := framework.StartClusterForTest(t, l2bridgeSpec)
	a, b := c.Nodes[0], c.Nodes[1]
	here := wire(t, a, "web", 1)
	far := wire(t, b, "web", 1)
	setFaults(t, a, hnsremote.FaultsRequest{ReservedAddresses: []string{far[0].IP.String()}})
	svc := apply(t, c, service("web", "web", "", 80, 8080), framework.Backends(here, far))
	expectLBs(t, c, a, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), backends(local(here...))...))
	err := framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		list, err := c.Admin.EventsV1().Events("web").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, ev := range list.Items {
			if ev.Reason == "HNSEndpointAddressRefused" && ev.Regarding.Name == svc.Name && strings.Contains(ev.Note, far[0].IP.String()) &&
				strings.Contains(ev.Note, "no endpoint on the network holds it") {
				return nil
			}
		}
		return fmt.Errorf("no HNSEndpointAddressRefused Warning on Service %s for %s", svc.Name, far[0].IP)
	})
	if err != nil {
		t.Fatal(err)
	}
	setFaults(t, a, hnsremote.FaultsRequest{})
	expectLBs(t, c, a, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), backends(local(here...), remote(far...))...))
}
