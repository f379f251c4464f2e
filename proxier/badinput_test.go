package proxier

import (
	"context"
	"fmt"
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSliceWithoutServiceProgramsNothing: EndpointSlices for a Service that
// does not exist (yet), or labelled for no Service at all, make no load
// balancer and no remote endpoint and crash nothing; once the Service
// appears, its load balancer follows, and deleting the Service again
// leaves the orphaned slice harmless.
func TestSliceWithoutServiceProgramsNothing(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.start()
	unlabelled := slice("nobody", endpoint{"10.244.2.9", "win-2"})
	unlabelled.Labels = nil
	n.apply(slice("ghost", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.7", "win-2"}), unlabelled)
	n.settle()
	if lbs, remotes := n.lbs(), n.remoteEndpointIPs(); len(lbs) != 0 || len(remotes) != 0 {
		t.Fatalf("slices without a Service programmed load balancers %+v, remote endpoints %v", lbs, remotes)
	}

	n.apply(service("ghost", "10.96.0.50"))
	n.eventually("the Service's load balancer", func() bool {
		lbs := n.lbs()
		return len(lbs) == 1 && lbs[0].Frontend == "10.96.0.50" && len(lbs[0].Backends) == 2
	})

	if err := n.client.CoreV1().Services("default").Delete(context.Background(), "ghost", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.eventually("load balancer and remote endpoint gone with the Service", func() bool {
		return len(n.lbs()) == 0 && len(n.remoteEndpointIPs()) == 0
	})
	// The slice left behind changes, as it would while the controller cleans up.
	orphan := slice("ghost", endpoint{"10.244.2.8", "win-2"})
	n.apply(orphan)
	if err := n.client.DiscoveryV1().EndpointSlices("default").Delete(context.Background(), orphan.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.settle()
	if lbs := n.lbs(); len(lbs) != 0 {
		t.Fatalf("orphaned slice programmed %+v", lbs)
	}
}

// TestDuplicateEndpointsAcrossSlicesThroughTheProxier: the same pod in two
// slices of one Service is one backend in HNS, and stays one while either
// copy goes away.
func TestDuplicateEndpointsAcrossSlicesThroughTheProxier(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.start()
	a := slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.7", "win-2"})
	b := slice("web", endpoint{"10.244.2.7", "win-2"})
	b.Name = "web-def"
	n.apply(service("web", "10.96.0.60"), a, b)
	n.eventually("one load balancer with two distinct backends", func() bool {
		lbs := n.lbs()
		return len(lbs) == 1 && len(lbs[0].Backends) == 2
	})
	if err := n.client.DiscoveryV1().EndpointSlices("default").Delete(context.Background(), a.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.eventually("the remaining copy keeps its backend", func() bool {
		lbs := n.lbs()
		return len(lbs) == 1 && len(lbs[0].Backends) == 1 && lbs[0].Backends[0] == "10.244.2.7"
	})
	if got := n.remoteEndpointIPs(); len(got) != 1 || got[0] != "10.244.2.7" {
		t.Errorf("remote endpoints %v, want the one shared backend", got)
	}
}

// TestRelabelledSliceLeavesItsOldService: a hand-made EndpointSlice whose
// kubernetes.io/service-name label moves to another Service, or goes, takes
// its endpoints from the Service it named before; kube-proxy's slice cache
// keys an update by the new slice only and keeps them.
func TestRelabelledSliceLeavesItsOldService(t *testing.T) {
	for name, label := range map[string]map[string]string{
		"moved to another Service": {discoveryv1.LabelServiceName: "api"},
		"label removed":            {},
	} {
		t.Run(name, func(t *testing.T) {
			n := newTestNode(t, "ws2025", "10.244.1.5")
			n.start()
			n.apply(service("web", "10.96.0.10"), service("api", "10.96.0.20"),
				slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.7", "win-2"}))
			n.eventually("web's load balancer", func() bool { return len(n.lbs()) == 1 })

			moved := slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.7", "win-2"})
			moved.Labels = label
			n.apply(moved)
			want := []string{}
			if label[discoveryv1.LabelServiceName] == "api" {
				want = []string{"10.96.0.20 → [10.244.1.5 10.244.2.7]"}
			}
			n.eventually(fmt.Sprintf("load balancers %v", want), func() bool {
				var got []string
				for _, lb := range n.lbs() {
					got = append(got, fmt.Sprintf("%s → %v", lb.Frontend, lb.Backends))
				}
				return slices.Equal(got, want)
			})
		})
	}
}
