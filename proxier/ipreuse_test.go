package proxier

import (
	"context"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// A pod of this node whose HNS endpoint the CNI replaced behind the same IP
// (its sandbox recreated, or the pod recreated under its name by a
// StatefulSet, with an IPAM that hands the address back), while the
// EndpointSlice went through its states and back between two syncs.

// podState is one state of the pod's endpoint in its EndpointSlice.
type podState int

const (
	podReady podState = iota
	podNotReady
	podTerminating
	podAbsent
	// podPublishedNotServing: not ready under publishNotReadyAddresses,
	// which has the EndpointSlice controller keep the endpoint ready and
	// say the pod's readiness in serving alone.
	podPublishedNotServing
	// podSliceDeleted: the slice itself deleted (the EndpointSlice controller
	// replacing it), to be made again under its name.
	podSliceDeleted
	// syncBetween is no state: the test steps the clock to a sync there.
	syncBetween
)

// reuseSlice is the Service "web"'s slice with the pod 10.244.1.5 of this
// node in state st.
func reuseSlice(st podState) *discoveryv1.EndpointSlice {
	s := slice("web")
	if st == podAbsent {
		return s
	}
	ready := st == podReady || st == podPublishedNotServing
	serving := st != podNotReady && st != podPublishedNotServing
	terminating := st == podTerminating
	s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
		Addresses:  []string{"10.244.1.5"},
		NodeName:   ptr.To(nodeName),
		Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
	})
	return s
}

// replaceLocalEndpoint does what the CNI does when a pod's sandbox is made
// again: the old endpoint deleted, a new one at the same IP attached to the
// new sandbox's namespace.
func (n *testNode) replaceLocalEndpoint(ip string) string {
	n.t.Helper()
	n.replacePod(ip, false)
	ctx := context.Background()
	ep, err := n.hns.CreateEndpoint(ctx, n.networkID, podEndpoint(ip))
	if err != nil {
		n.t.Fatal(err)
	}
	ns, err := n.hns.CreateNamespace(ctx, &hnslb.Namespace{Type: hnslb.NamespaceTypeHost})
	if err != nil {
		n.t.Fatal(err)
	}
	if err := n.hns.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		n.t.Fatal(err)
	}
	return ep.ID
}

// TestLocalEndpointReplacedWithinOneSyncIsServedAtThatSync: the slice's
// states (the slice itself deleted and made again among them) between two
// syncs (kube-proxy's default --min-sync-period is one
// second) end where they began, so the desired load balancer is the one
// HNS holds, but its backend's endpoint is another. The sync that follows
// writes the new endpoint into the load balancer: before, nothing wrote it
// until a drift repair (5 minutes by default), and the frontend was dark
// meanwhile (the simulator drops a deleted endpoint from its load
// balancers). Every profile; a pod at 10.244.1.6 traces to the frontend.
// Under publishNotReadyAddresses the slice keeps the pod ready throughout
// and only serving drops; with a sync between (the usual pace: a sandbox
// takes seconds to make) that sync sees the old endpoint gone and no new
// one yet, and the pod's return changes no desired load balancer.
func TestLocalEndpointReplacedWithinOneSyncIsServedAtThatSync(t *testing.T) {
	sequences := map[string][]podState{
		"sandbox recreated":                                         {podNotReady, podReady},
		"pod recreated under its name":                              {podTerminating, podAbsent, podNotReady, podReady},
		"pod recreated, terminating off":                            {podAbsent, podNotReady, podReady},
		"sandbox recreated, publishNotReadyAddresses":               {podPublishedNotServing, podReady},
		"sandbox recreated, publishNotReadyAddresses, sync between": {podPublishedNotServing, syncBetween, podReady},
		"sandbox recreated, sync between":                           {podNotReady, syncBetween, podReady},
		"slice deleted and made again, sandbox recreated":           {podSliceDeleted, podReady},
	}
	for _, p := range sim.Profiles() {
		for name, seq := range sequences {
			t.Run(p.Name+"/"+name, func(t *testing.T) {
				clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
				n := newTestNode(t, p.Name, "10.244.1.5", "10.244.1.6")
				n.clock, n.minSyncPeriod = clk, time.Hour // no sync but the ones the test steps the clock to
				n.repairPeriod = 1000 * time.Hour         // and no drift repair, which finds what a sync missed
				obs := &recordingObserver{}
				n.observer = obs
				n.start()
				n.apply(service("web", "10.96.0.10"), reuseSlice(podReady))
				n.eventually("the load balancer over the pod", func() bool {
					clk.Step(n.minSyncPeriod)
					lbs := n.lbs()
					return len(lbs) == 1 && slices.Equal(lbs[0].Backends, []string{"10.244.1.5"})
				})
				n.settle()
				// The polling above may have stepped the clock past the
				// last sync: a change now would sync at once. A sync made
				// now has the changes below wait for the test's step.
				for touch := 0; n.proxier.minSyncWait() <= 0; touch++ {
					syncs := obs.count()
					n.apply(service("web", "10.96.0.10", func(s *v1.Service) { s.Annotations = map[string]string{"touch": strconv.Itoa(touch)} }))
					n.eventually("the sync the touch asked for", func() bool { return obs.count() > syncs })
				}
				n.settle()
				for _, st := range seq {
					switch st {
					case syncBetween:
						syncs := obs.count()
						clk.Step(n.minSyncPeriod)
						n.eventually("the sync between", func() bool { return obs.count() > syncs })
						n.settle()
						continue
					case podReady:
						n.replaceLocalEndpoint("10.244.1.5")
					default: // the sandbox, and its endpoint, gone
						n.replacePod("10.244.1.5", false)
					}
					// The lister holds the slice before the proxier's handler ran
					// for it; a sync the clock steps to in between misses it.
					reported := obs.changesReported()
					if st == podSliceDeleted {
						if err := n.client.DiscoveryV1().EndpointSlices("default").Delete(context.Background(), reuseSlice(st).Name, metav1.DeleteOptions{}); err != nil {
							t.Fatal(err)
						}
					} else {
						n.apply(reuseSlice(st))
					}
					n.eventually("the proxier's handler taking the slice", func() bool { return obs.changesReported() > reported })
				}
				syncs := obs.count()
				clk.Step(n.minSyncPeriod)
				n.eventually("the sync after the pod came back", func() bool { return obs.count() > syncs })
				if lbs := n.lbs(); len(lbs) != 1 || !slices.Equal(lbs[0].Backends, []string{"10.244.1.5"}) {
					t.Fatalf("after one sync HNS holds %+v, want the load balancer over the pod's new endpoint", lbs)
				}
				vc, err := vfp.NewCluster(vfp.Node{Name: nodeName, IPs: []netip.Addr{netip.MustParseAddr(nodeIP)}, HNS: n.hns.Snapshot(), NetworkName: "cbr0"})
				if err != nil {
					t.Fatal(err)
				}
				pkt := vfp.Packet{Src: netip.MustParseAddrPort("10.244.1.6:40000"), Dst: netip.MustParseAddrPort("10.96.0.10:80"), Protocol: hnslb.ProtocolTCP}
				v, err := vc.Trace(pkt, vfp.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if v.Outcome != vfp.DeliveredToPod || v.Backend.String() != "10.244.1.5:8080" {
					t.Errorf("trace %s: %s, want delivered to 10.244.1.5:8080", pkt, v)
				}
			})
		}
	}
}

// count is how many syncs have ended.
func (o *recordingObserver) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.syncs)
}
