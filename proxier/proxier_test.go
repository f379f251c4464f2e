package proxier

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestClusterIPProgramsLocalAndRemoteBackends(t *testing.T) {
	n := newTestNode(t, "ws2025", "10.244.1.5")
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web",
		endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.7", "win-2"}))
	n.eventually("web load balancer", func() bool {
		lbs := n.lbs()
		return len(lbs) == 1 && reflect.DeepEqual(lbs[0].Backends, []string{"10.244.1.5", "10.244.2.7"})
	})
	lb := n.lbs()[0]
	if lb.Frontend != "10.96.0.10" || lb.Port != 80 || lb.Internal != 8080 {
		t.Errorf("load balancer = %+v, want 10.96.0.10:80 → 8080", lb)
	}
	if got := n.remoteEndpointIPs(); !reflect.DeepEqual(got, []string{"10.244.2.7"}) {
		t.Errorf("remote endpoints = %v, want the one remote backend", got)
	}
}

func TestOneEndpointChangeIsOneWriteAndNoList(t *testing.T) {
	for _, tc := range []struct {
		profile string
		writes  int // modify where HNS supports it, else delete + create
	}{
		{"ws2025", 1},
		{"ws2025-15.4", 2}, // 15.4 claims modify but ignores backends: never used
		{"ws2022", 2},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			n := newTestNode(t, tc.profile, "10.244.1.5", "10.244.1.6")
			n.start()
			n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
			n.eventually("first backend", func() bool { return len(n.lbs()) == 1 })
			n.settle()
			n.hns.ResetCounters()

			n.apply(slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.1.6", nodeName}))
			n.eventually("second backend", func() bool {
				lbs := n.lbs()
				return len(lbs) == 1 && len(lbs[0].Backends) == 2
			})
			n.settle()
			c := n.hns.Counters()
			if c.Writes() != tc.writes || c.Lists() != 0 {
				t.Errorf("one endpoint change: %d writes, %d lists; want %d writes, 0 lists (%+v)", c.Writes(), c.Lists(), tc.writes, c.Calls)
			}
		})
	}
}

func TestServiceDeletionRemovesLoadBalancerAndRemoteEndpoint(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.2.7", "win-2"}))
	n.eventually("load balancer", func() bool { return len(n.lbs()) == 1 })
	if err := n.client.CoreV1().Services("default").Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.eventually("load balancer and remote endpoint gone", func() bool {
		return len(n.lbs()) == 0 && len(n.remoteEndpointIPs()) == 0
	})
}

func TestRestartWithNothingChangedWritesNothing(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.7", "win-2"}))
	n.apply(service("dns", "10.96.0.53", func(s *v1.Service) {
		s.Spec.Ports = []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolUDP, Port: 53, TargetPort: s.Spec.Ports[0].TargetPort}}
	}))
	n.eventually("load balancers", func() bool { return len(n.lbs()) == 1 })
	n.settle()
	before := n.lbs()
	n.stop()

	n.hns.ResetCounters()
	n.start()
	n.settle()
	if w := n.hns.Counters().Writes(); w != 0 {
		t.Errorf("restart made %d HNS writes, want 0 (%+v)", w, n.hns.Counters().Calls)
	}
	if after := n.lbs(); !reflect.DeepEqual(before, after) {
		t.Errorf("load balancers changed across restart:\nbefore %+v\nafter  %+v", before, after)
	}
}

func TestConflictingFrontendsOldestWinsAndYoungerGetsEvent(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5", "10.244.1.6")
	n.start()
	withExternal := func(created int64) func(*v1.Service) {
		return func(s *v1.Service) {
			s.CreationTimestamp = metav1.NewTime(time.Unix(created, 0))
			s.Spec.ExternalIPs = []string{"192.0.2.10"}
		}
	}
	old := service("old", "10.96.0.10", withExternal(100))
	young := service("young", "10.96.0.11", withExternal(200))
	n.apply(old, young, slice("old", endpoint{"10.244.1.5", nodeName}), slice("young", endpoint{"10.244.1.6", nodeName}))
	n.eventually("three load balancers", func() bool { return len(n.lbs()) == 3 })
	for _, lb := range n.lbs() {
		if lb.Frontend == "192.0.2.10" && !reflect.DeepEqual(lb.Backends, []string{"10.244.1.5"}) {
			t.Errorf("external IP load balancer backends %v, want the older Service's", lb.Backends)
		}
	}
	n.eventually("conflict event", func() bool {
		select {
		case e := <-n.recorder.Events:
			return strings.Contains(e, "LoadBalancerConflict")
		default:
			return false
		}
	})
	// When the older Service goes, the younger one takes the frontend over.
	if err := n.client.CoreV1().Services("default").Delete(context.Background(), "old", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.eventually("younger Service owns the external IP", func() bool {
		for _, lb := range n.lbs() {
			if lb.Frontend == "192.0.2.10" {
				return reflect.DeepEqual(lb.Backends, []string{"10.244.1.6"})
			}
		}
		return false
	})
}

func TestDriftRepairRestoresDeletedLoadBalancer(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("load balancer", func() bool { return len(n.lbs()) == 1 })
	n.settle()
	snap := n.hns.Snapshot()
	if err := n.hns.DeleteLoadBalancerOutOfBand(snap.LoadBalancers[0].ID); err != nil {
		t.Fatal(err)
	}
	// A drift repair is what the periodic timer would run.
	n.proxier.mu.Lock()
	n.proxier.lastRepair = time.Time{}
	n.proxier.mu.Unlock()
	n.proxier.queue.Add(syncKey)
	n.eventually("load balancer restored", func() bool { return len(n.lbs()) == 1 })
}

func TestUnsupportedProtocolIsReportedNotProgrammed(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.start()
	n.apply(service("sctp", "10.96.0.20", func(s *v1.Service) { s.Spec.Ports[0].Protocol = v1.ProtocolSCTP }),
		slice("sctp", endpoint{"10.244.1.5", nodeName}))
	n.eventually("UnsupportedProtocol event", func() bool {
		select {
		case e := <-n.recorder.Events:
			return strings.Contains(e, "UnsupportedProtocol")
		default:
			return false
		}
	})
	if lbs := n.lbs(); len(lbs) != 0 {
		t.Errorf("SCTP Service got load balancers: %+v", lbs)
	}
}
