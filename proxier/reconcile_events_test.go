package proxier

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// countEvents drains the recorder and counts events whose text has reason.
func (n *testNode) countEvents(reason string) int {
	count := 0
	for {
		select {
		case e := <-n.recorder.Events:
			if strings.Contains(e, reason) {
				count++
			}
		default:
			return count
		}
	}
}

// TestForeignLoadBalancerOnAnExternalIPIsReportedOnceAndKept (F1): after the
// node's first start, a namespace user points an external IP at a load
// balancer hnsproxy does not own. It survives the Service's life; the
// Service gets one Warning event however many retries see the conflict.
func TestForeignLoadBalancerOnAnExternalIPIsReportedOnceAndKept(t *testing.T) {
	n, holdForeign := startWithForeignHolders(t)
	foreignID := holdForeign("192.0.2.10")
	n.apply(service("tenant", "10.96.0.11", func(s *v1.Service) { s.Spec.ExternalIPs = []string{"192.0.2.10"} }),
		slice("tenant", endpoint{"10.244.1.5", nodeName}))
	got := 0
	n.eventually("a ForeignLoadBalancerConflict event", func() bool {
		got += n.countEvents(ReasonForeignLoadBalancerConflict)
		return got > 0
	})
	n.settle() // several retries (RetryMax 100 ms) see the same conflict
	if got += n.countEvents(ReasonForeignLoadBalancerConflict); got != 1 {
		t.Errorf("%d conflict events, want 1 per conflict", got)
	}
	if _, err := n.hns.GetLoadBalancerByID(context.Background(), foreignID); err != nil {
		t.Fatalf("the foreign load balancer is gone: %v", err)
	}
	if err := n.client.CoreV1().Services("default").Delete(context.Background(), "tenant", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.settle()
	if _, err := n.hns.GetLoadBalancerByID(context.Background(), foreignID); err != nil {
		t.Fatalf("the foreign load balancer is gone after the Service: %v", err)
	}
}

// TestExternalIPEqualToAClusterIPIsRefused (F2): an older Service's
// external IP equal to a younger Service's cluster IP never takes its
// traffic; the tenant's Service gets a Warning event.
func TestExternalIPEqualToAClusterIPIsRefused(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5", "10.244.1.6")
	n.start()
	tenant := service("tenant", "10.96.0.11", func(s *v1.Service) {
		s.CreationTimestamp = metav1.NewTime(s.CreationTimestamp.Add(-3600e9))
		s.Spec.ExternalIPs = []string{"10.96.0.10"}
	})
	n.apply(tenant, slice("tenant", endpoint{"10.244.1.6", nodeName}))
	n.eventually("the tenant's cluster IP and external IP", func() bool { return len(n.lbs()) == 2 })
	n.apply(service("victim", "10.96.0.10"), slice("victim", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the victim's cluster IP carries the victim's backend", func() bool {
		for _, lb := range n.lbs() {
			if lb.Frontend == "10.96.0.10" {
				return len(lb.Backends) == 1 && lb.Backends[0] == "10.244.1.5"
			}
		}
		return false
	})
	n.settle()
	if got := n.countEvents(desired.ReasonExternalIPRefused); got != 1 {
		t.Errorf("%d ExternalIPRefused events, want 1", got)
	}
	if len(n.lbs()) != 2 {
		t.Errorf("load balancers %+v, want the two cluster IPs", n.lbs())
	}
}

// TestOverTheCapOnlyRealizableBackendsCompete (F10): ready endpoints on
// this node without an HNS endpoint never crowd out those with one; the
// Service gets one BackendsUnrealizable event.
func TestOverTheCapOnlyRealizableBackendsCompete(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5") // .7 and .8 have no HNS endpoint
	n.config.MaxBackends = 2
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web",
		endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.1.7", nodeName}, endpoint{"10.244.1.8", nodeName},
		endpoint{"10.244.2.9", "win-2"}))
	n.eventually("the realizable backends, up to the cap", func() bool {
		lbs := n.lbs()
		return len(lbs) == 1 && reflect.DeepEqual(lbs[0].Backends, []string{"10.244.1.5", "10.244.2.9"})
	})
	n.settle()
	if got := n.countEvents(ReasonBackendsUnrealizable); got != 1 {
		t.Errorf("%d BackendsUnrealizable events, want 1", got)
	}
}

// TestBackendsUnrealizableListsTheAddressesLast: the API takes a note of
// 1024 bytes, and the events package cuts a longer one at the end. The
// addresses are the part that grows with the Service, so they come last:
// a cut note still says how many backends are left out and why.
func TestBackendsUnrealizableListsTheAddressesLast(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5") // .7 and .8 have no HNS endpoint
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web",
		endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.1.7", nodeName}, endpoint{"10.244.1.8", nodeName}))
	n.eventually("the realizable backend", func() bool {
		lbs := n.lbs()
		return len(lbs) == 1 && reflect.DeepEqual(lbs[0].Backends, []string{"10.244.1.5"})
	})
	n.settle()
	var notes []string
	for len(n.recorder.Events) > 0 {
		if e := <-n.recorder.Events; strings.Contains(e, ReasonBackendsUnrealizable) {
			notes = append(notes, e)
		}
	}
	if len(notes) != 1 {
		t.Fatalf("BackendsUnrealizable events %q, want 1", notes)
	}
	// A Warning: kubectl get events --field-selector type=Warning, and
	// alerts on Warning events, must find the endpoints left out.
	if !strings.HasPrefix(notes[0], v1.EventTypeWarning+" ") {
		t.Errorf("event %q is not a Warning", notes[0])
	}
	const want = "10.96.0.10:80/tcp: 2 ready endpoints on this node have no HNS endpoint and are left out (over the backend cap, other endpoints stand in): 10.244.1.7, 10.244.1.8"
	if !strings.HasSuffix(notes[0], want) {
		t.Errorf("event %q, want it to end %q", notes[0], want)
	}
}

// TestManyLoadBalancersLeavingOutBackendsAreAFewEvents: when the pods of
// this node have no HNS endpoint (an HNS restart that lost the containers'
// endpoints, projectcalico/calico#5164, or a CNI that has not made them),
// every load balancer with a backend among them leaves it out. One
// BackendsUnrealizable per load balancer would be an event per Service from
// the node; the node-wide cause gets a few on Services and one on the Node
// while it lasts. Once no load balancer leaves a backend out, a new one
// that does is raised on its Service again.
func TestManyLoadBalancersLeavingOutBackendsAreAFewEvents(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5") // .7 has no HNS endpoint
	n.start()
	const services = 3 * maxServiceEvents
	for i := range services {
		name := fmt.Sprintf("web-%d", i)
		n.apply(service(name, fmt.Sprintf("10.96.0.%d", 10+i)), slice(name,
			endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.1.7", nodeName}))
	}
	// Every load balancer's condition was decided on (the proxier
	// remembers each it reported); the recorder holds what was raised.
	n.eventually("every load balancer reported leaving out 10.244.1.7", func() bool { return n.reportedLBs(leftOutOf) == services })
	n.expectNodeWideBound(ReasonBackendsUnrealizable, "load balancers leave out", services)

	// The pod without an HNS endpoint goes: nothing is left out. A
	// Service that leaves out another address later is a new condition.
	for i := range services {
		name := fmt.Sprintf("web-%d", i)
		n.apply(slice(name, endpoint{"10.244.1.5", nodeName}))
	}
	n.eventually("no load balancer leaving a backend out", func() bool { return n.reportedLBs(leftOutOf) == 0 })
	n.drainEvents()
	n.apply(service("late", "10.96.1.10"), slice("late", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.1.8", nodeName}))
	n.eventually("the late Service's load balancer reported", func() bool { return n.reportedLBs(leftOutOf) == 1 })
	if got := n.countEvents(ReasonBackendsUnrealizable); got != 1 {
		t.Errorf("%d BackendsUnrealizable events for a Service leaving out a backend after the others were whole, want 1", got)
	}
}

// TestBackendsLeftOutAfterManyAreRaisedOnTheirServices: once no more than
// maxServiceEvents load balancers leave out a backend, those that were
// raised nowhere are raised on their Services, as the foreign conflicts
// left after many are.
func TestBackendsLeftOutAfterManyAreRaisedOnTheirServices(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5") // .7 has no HNS endpoint
	n.start()
	const services, left = 3 * maxServiceEvents, maxServiceEvents / 2
	web := func(i int) string { return fmt.Sprintf("web-%d", i) }
	vip := func(i int) string { return fmt.Sprintf("10.96.0.%d", 10+i) }
	for i := range services {
		n.apply(service(web(i), vip(i)), slice(web(i), endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.1.7", nodeName}))
	}
	n.eventually("every load balancer reported leaving out 10.244.1.7", func() bool { return n.reportedLBs(leftOutOf) == services })
	notes := n.drainEvents()
	// Raised in key order: the last ones were raised nowhere.
	for i := range services - left {
		n.apply(slice(web(i), endpoint{"10.244.1.5", nodeName}))
	}
	// Sync holds the lock reportedLBs takes, and raises the events in it.
	n.eventually("a few load balancers left leaving it out", func() bool { return n.reportedLBs(leftOutOf) == left })
	notes = append(notes, n.drainEvents()...)
	for i := services - left; i < services; i++ {
		if !raisedOnService(notes, ReasonBackendsUnrealizable, vip(i)+":80", "more than") {
			t.Errorf("%s leaving out 10.244.1.7, left after the others were whole, was never raised on its Service", web(i))
		}
	}
}

// TestManyForeignHeldFrontendsAreAFewEvents: another service proxy left
// running on the node (a migration that skipped stopping kube-proxy)
// holds the external IPs of many Services. One ForeignLoadBalancerConflict
// per frontend would be an event per Service from the node; they are a
// few on Services and one on the Node while conflicts last, and a
// conflict after they all ended is raised on its Service again.
func TestManyForeignHeldFrontendsAreAFewEvents(t *testing.T) {
	n, holdForeign := startWithForeignHolders(t)
	const services = 3 * maxServiceEvents
	tenant := func(i int) string { return fmt.Sprintf("tenant-%d", i) }
	for i := range services {
		vip := fmt.Sprintf("192.0.2.%d", 10+i)
		holdForeign(vip)
		n.apply(service(tenant(i), fmt.Sprintf("10.96.0.%d", 20+i), func(s *v1.Service) { s.Spec.ExternalIPs = []string{vip} }),
			slice(tenant(i), endpoint{"10.244.1.5", nodeName}))
	}
	n.eventually("every held frontend reported", func() bool { return n.reportedLBs(foreignOf) == services })
	n.expectNodeWideBound(ReasonForeignLoadBalancerConflict, "another service proxy", services)

	for i := range services {
		if err := n.client.CoreV1().Services("default").Delete(context.Background(), tenant(i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	n.eventually("no held frontend reported", func() bool { return n.reportedLBs(foreignOf) == 0 })
	n.drainEvents()
	holdForeign("192.0.2.200")
	n.apply(service("late", "10.96.1.10", func(s *v1.Service) { s.Spec.ExternalIPs = []string{"192.0.2.200"} }),
		slice("late", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the late Service's held frontend reported", func() bool { return n.reportedLBs(foreignOf) == 1 })
	if got := n.countEvents(ReasonForeignLoadBalancerConflict); got != 1 {
		t.Errorf("%d ForeignLoadBalancerConflict events for a conflict after the others ended, want 1", got)
	}
}

// TestOneLastingForeignConflictDoesNotSilenceLaterOnes: a tenant's
// external IP held for weeks by a load balancer hnsproxy does not own is
// no node-wide cause; conflicts that come and go beside it, one at a
// time, are each raised on their Service. A bound that counted every
// conflict since none last had one would go silent after ten of them, for
// as long as the one lasts, long after the Node's Warning expired.
func TestOneLastingForeignConflictDoesNotSilenceLaterOnes(t *testing.T) {
	n, holdForeign := startWithForeignHolders(t)
	tenant := func(i int) string { return fmt.Sprintf("tenant-%d", i) }
	conflict := func(i int) {
		vip := fmt.Sprintf("192.0.2.%d", 10+i)
		holdForeign(vip)
		n.apply(service(tenant(i), fmt.Sprintf("10.96.0.%d", 20+i), func(s *v1.Service) { s.Spec.ExternalIPs = []string{vip} }),
			slice(tenant(i), endpoint{"10.244.1.5", nodeName}))
	}
	conflict(0) // lasts
	n.eventually("the lasting conflict reported", func() bool { return n.reportedLBs(foreignOf) == 1 })
	n.drainEvents()
	for i := 1; i <= maxServiceEvents+1; i++ {
		conflict(i)
		n.eventually(fmt.Sprintf("conflict %d reported", i), func() bool { return n.reportedLBs(foreignOf) == 2 })
		onService := 0
		for _, e := range n.drainEvents() {
			if strings.Contains(e, ReasonForeignLoadBalancerConflict) && !strings.Contains(e, "another service proxy") {
				onService++
			}
		}
		if onService != 1 {
			t.Errorf("conflict %d beside the lasting one: %d ForeignLoadBalancerConflict events on Services, want 1", i, onService)
		}
		if err := n.client.CoreV1().Services("default").Delete(context.Background(), tenant(i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		n.eventually(fmt.Sprintf("conflict %d gone", i), func() bool { return n.reportedLBs(foreignOf) == 1 })
	}
}

// TestForeignConflictsLeftAfterManyAreRaisedOnTheirServices: once no more
// than maxServiceEvents frontends are held, each still held that was
// raised nowhere is raised on its Service: the other service proxy
// stopped, a few conflicts stay, and the Node's Warning has expired.
func TestForeignConflictsLeftAfterManyAreRaisedOnTheirServices(t *testing.T) {
	n, holdForeign := startWithForeignHolders(t)
	const services, left = 3 * maxServiceEvents, maxServiceEvents / 2
	tenant := func(i int) string { return fmt.Sprintf("tenant-%d", i) }
	vip := func(i int) string { return fmt.Sprintf("192.0.2.%d", 10+i) }
	for i := range services {
		holdForeign(vip(i))
		n.apply(service(tenant(i), fmt.Sprintf("10.96.0.%d", 20+i), func(s *v1.Service) { s.Spec.ExternalIPs = []string{vip(i)} }),
			slice(tenant(i), endpoint{"10.244.1.5", nodeName}))
	}
	n.eventually("every held frontend reported", func() bool { return n.reportedLBs(foreignOf) == services })
	notes := n.drainEvents()
	// The conflicts are raised in key order: the last ones were raised
	// nowhere.
	for i := range services - left {
		if err := n.client.CoreV1().Services("default").Delete(context.Background(), tenant(i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	n.eventually("a few held frontends left", func() bool { return n.reportedLBs(foreignOf) == left })
	notes = append(notes, n.drainEvents()...)
	for i := services - left; i < services; i++ {
		if !raisedOnService(notes, ReasonForeignLoadBalancerConflict, vip(i)+":80", "another service proxy") {
			t.Errorf("the conflict of %s, left after the others ended, was never raised on its Service", tenant(i))
		}
	}
}

// raisedOnService reports whether notes hold an event of reason about
// frontend that is not the Node's, whose note has onNode.
func raisedOnService(notes []string, reason, frontend, onNode string) bool {
	for _, e := range notes {
		if strings.Contains(e, reason) && strings.Contains(e, frontend) && !strings.Contains(e, onNode) {
			return true
		}
	}
	return false
}

// expectNodeWideBound drains the recorder and checks that of the events
// of reason for conditions of n load balancers, maxServiceEvents were
// raised on Services and one, whose note has onNode, on the Node.
func (n *testNode) expectNodeWideBound(reason, onNode string, lbs int) {
	n.t.Helper()
	services, node := 0, 0
	for _, e := range n.drainEvents() {
		switch {
		case !strings.Contains(e, reason):
		case strings.Contains(e, onNode):
			node++
		default:
			services++
		}
	}
	if services != maxServiceEvents || node != 1 {
		n.t.Errorf("%d %s events on Services and %d on the Node for %d load balancers, want %d and 1", services, reason, node, lbs, maxServiceEvents)
	}
}

// reportedLBs is how many load balancers the proxier holds reported with
// the condition whose memory of picks (leftOutOf, foreignOf).
func (n *testNode) reportedLBs(of func(*Proxier) onceEach) int {
	n.proxier.mu.Lock()
	defer n.proxier.mu.Unlock()
	return len(of(n.proxier))
}

func leftOutOf(p *Proxier) onceEach { return p.leftOutReported }
func foreignOf(p *Proxier) onceEach { return p.foreignReported }

// startWithForeignHolders starts a node past its first Sync (no takeover
// any more) with one Service, and returns it with a function that makes a
// load balancer hnsproxy does not own on vip:80 (to the pod 10.244.1.6)
// and returns its ID.
func startWithForeignHolders(t *testing.T, setup ...func(*testNode)) (*testNode, func(vip string) string) {
	t.Helper()
	n := newTestNode(t, "ws2022", "10.244.1.5", "10.244.1.6")
	for _, f := range setup {
		f(n)
	}
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("first load balancer", func() bool { return len(n.lbs()) == 1 })
	n.settle()
	var podEP string
	for _, e := range n.hns.Snapshot().Endpoints {
		if e.IP() == "10.244.1.6" {
			podEP = e.ID
		}
	}
	return n, func(vip string) string {
		t.Helper()
		lb, err := n.hns.CreateLoadBalancer(context.Background(), &hnslb.LoadBalancer{
			HostComputeEndpoints: []string{podEP},
			FrontendVIPs:         []string{vip},
			PortMappings:         []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 9000, ExternalPort: 80}},
			SchemaVersion:        hnslb.SchemaVersion{Major: 2},
		})
		if err != nil {
			t.Fatal(err)
		}
		return lb.ID
	}
}

// TestARecreatedServiceGetsItsForeignConflictReported: a Service deleted
// and made again under its name between two syncs (kubectl replace
// --force, a chart reinstalled) whose external IP a foreign load balancer
// still holds gets its own ForeignLoadBalancerConflict: the first object's
// event is not the new one's (kubectl describe shows a Service's events by
// its UID), and the frontend stays unserved.
func TestARecreatedServiceGetsItsForeignConflictReported(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	n := newTestNode(t, "ws2022", "10.244.1.5", "10.244.1.6")
	n.clock = clk
	n.minSyncPeriod = time.Hour // no sync but the ones the test steps the clock to
	n.start()
	n.settle() // a load balancer found at the start is adopted, not foreign
	var podEP string
	for _, e := range n.hns.Snapshot().Endpoints {
		if e.IP() == "10.244.1.6" {
			podEP = e.ID
		}
	}
	ctx := context.Background()
	if _, err := n.hns.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{
		HostComputeEndpoints: []string{podEP},
		FrontendVIPs:         []string{"192.0.2.10"},
		PortMappings:         []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 9000, ExternalPort: 80}},
		SchemaVersion:        hnslb.SchemaVersion{Major: 2},
	}); err != nil {
		t.Fatal(err)
	}
	tenant := func(uid types.UID) *v1.Service {
		return service("tenant", "10.96.0.11", func(s *v1.Service) {
			s.UID, s.Spec.ExternalIPs = uid, []string{"192.0.2.10"}
		})
	}
	got := 0
	conflictRaised := func() bool {
		clk.Step(n.minSyncPeriod)
		got += n.countEvents(ReasonForeignLoadBalancerConflict)
		return got > 0
	}
	n.apply(tenant("uid-1"), slice("tenant", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the first object's conflict event", conflictRaised)
	if err := n.client.CoreV1().Services("default").Delete(ctx, "tenant", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.apply(tenant("uid-2"))
	n.eventually("the proxier's cache holding the new object", n.cachesCaughtUp)
	got = 0
	n.eventually("the new object's conflict event", conflictRaised)
}

// TestARecreatedServiceGetsItsLeftOutBackendsReported: as a foreign
// conflict, backends left out of the load balancer of a Service deleted
// and made again under its name between two syncs are raised on the new
// object: the first object's event is not the new one's.
func TestARecreatedServiceGetsItsLeftOutBackendsReported(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	n := newTestNode(t, "ws2022", "10.244.1.5") // .7 has no HNS endpoint
	n.clock = clk
	n.minSyncPeriod = time.Hour // no sync but the ones the test steps the clock to
	n.start()
	web := func(uid types.UID) *v1.Service {
		return service("web", "10.96.0.10", func(s *v1.Service) { s.UID = uid })
	}
	got := 0
	leftOutRaised := func() bool {
		clk.Step(n.minSyncPeriod)
		got += n.countEvents(ReasonBackendsUnrealizable)
		return got > 0
	}
	n.apply(web("uid-1"), slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.1.7", nodeName}))
	n.eventually("the first object's BackendsUnrealizable event", leftOutRaised)
	if err := n.client.CoreV1().Services("default").Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.apply(web("uid-2"))
	n.eventually("the proxier's cache holding the new object", n.cachesCaughtUp)
	got = 0
	n.eventually("the new object's BackendsUnrealizable event", leftOutRaised)
}

// TestEachForeignHeldFrontendOfAServiceReachesTheAPI: a Service whose two
// external IPs are both held by load balancers hnsproxy does not own shows
// both in its events. client-go's broadcaster keys an event's series on
// the Service and reason, not the note, so a second event of one Sync
// only counted up the first and the second frontend was never said.
func TestEachForeignHeldFrontendOfAServiceReachesTheAPI(t *testing.T) {
	n, holdForeign := startWithForeignHolders(t, func(n *testNode) { n.apiEvents = true })
	first, second := holdForeign("192.0.2.10"), holdForeign("192.0.2.11")
	n.apply(service("tenant", "10.96.0.11", func(s *v1.Service) { s.Spec.ExternalIPs = []string{"192.0.2.10", "192.0.2.11"} }),
		slice("tenant", endpoint{"10.244.1.5", nodeName}))
	says := func(events []eventsv1.Event) bool {
		notes := ""
		for _, e := range events {
			notes += e.Note + "\n"
		}
		return strings.Contains(notes, first) && strings.Contains(notes, second)
	}
	if _, onServices := n.apiEventsOf(ReasonForeignLoadBalancerConflict, func(_, onServices []eventsv1.Event) bool {
		return says(onServices)
	}); !says(onServices) {
		t.Errorf("the Service's events do not name both foreign load balancers %s and %s: %+v", first, second, onServices)
	}
}
