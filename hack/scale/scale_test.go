package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/hnsproxy/hnsproxy/sim"
)

func smallSpec() clusterSpec {
	return clusterSpec{Services: 40, EndpointsPerService: 5, Nodes: 4, PodsPerNode: 12, Seed: 3}
}

// remoteInUse recounts, from the members alone, the remote pods a ready endpoint names.
func remoteInUse(c *cluster) int {
	seen := map[int]bool{}
	for i := range c.members {
		for j, p := range c.members[i] {
			if c.ready[i][j] && !c.pods[p].local() {
				seen[p] = true
			}
		}
	}
	return len(seen)
}

func TestClusterModelKeepsItsCountsConsistent(t *testing.T) {
	c := newCluster(smallSpec())
	for i, m := range c.members {
		distinct := map[int]bool{}
		for _, p := range m {
			distinct[p] = true
		}
		if len(distinct) != 5 {
			t.Fatalf("service %d has %d distinct pods, want 5", i, len(distinct))
		}
	}
	if got, want := c.expectedRemoteEndpoints(), remoteInUse(c); got != want {
		t.Fatalf("expected remote endpoints %d, recount %d", got, want)
	}
	for k := range 500 {
		before := remoteInUse(c)
		ch := c.nextChange()
		after := remoteInUse(c)
		if diff := max(after-before, before-after); diff != ch.remoteEndpointWrites {
			t.Fatalf("change %d: remote endpoints %d → %d, but the change expects %d writes", k, before, after, ch.remoteEndpointWrites)
		}
		if c.expectedBackends(ch.service) == 0 {
			t.Fatalf("change %d left service %d without a ready endpoint", k, ch.service)
		}
		if got := c.expectedRemoteEndpoints(); got != after {
			t.Fatalf("change %d: expected remote endpoints %d, recount %d", k, got, after)
		}
	}
}

// Every kind of change counts the remote endpoints it creates and deletes
// as a recount from the members finds them, and names the slices to write.
func TestChangeMixesCountRemoteEndpointWrites(t *testing.T) {
	c := newCluster(smallSpec())
	next := []func() (change, bool){
		c.replacePodChange, c.drainChange,
		func() (change, bool) { return c.serviceChurn(), true },
		c.scaleChange,
	}
	for k := range 64 { // 16 of each: 8 scale-ups take 160 new pods, the 3 other nodes have room for 723
		before := remoteInUse(c)
		ch, ok := next[k%len(next)]()
		if !ok {
			t.Fatalf("change %d: none possible", k)
		}
		after := remoteInUse(c)
		// A change both deletes and creates; a recount sees only the net
		// difference, which the writes cannot be below.
		if net := max(after-before, before-after); ch.remoteEndpointWrites < net || (ch.remoteEndpointWrites-net)%2 != 0 {
			t.Fatalf("%s %d: remote endpoints %d → %d, but the change expects %d writes", ch.kind, k, before, after, ch.remoteEndpointWrites)
		}
		if len(ch.writes) == 0 {
			t.Fatalf("%s %d writes nothing to the API", ch.kind, k)
		}
		for i := range c.svcs {
			if c.expectedBackends(i) == 0 {
				t.Fatalf("%s %d left service %d without a ready endpoint", ch.kind, k, i)
			}
		}
		for p, refs := range c.readyRefs {
			if refs < 0 {
				t.Fatalf("%s %d: pod %d has %d ready references", ch.kind, k, p, refs)
			}
		}
	}
	if len(c.svcs) != smallSpec().Services {
		t.Errorf("service churn left %d Services, want %d", len(c.svcs), smallSpec().Services)
	}
}

// TestChangesStopWhenOtherNodesAreFull: a run never reuses a pod address,
// so enough scale-ups, replacements and drains fill the other nodes' /24s.
// Then each says no change is possible (the harness reports a problem)
// instead of panicking, and until then every new pod has an address of
// its own on a node other than this one.
func TestChangesStopWhenOtherNodesAreFull(t *testing.T) {
	c := newCluster(smallSpec())
	scaleUps := 0
	for {
		ch, ok := c.scaleChange()
		if !ok {
			break
		}
		if ch.kind == kindScaleUp {
			scaleUps++
		}
		if scaleUps > 1000 {
			t.Fatal("scale-ups never ran out of room")
		}
	}
	// 3 other nodes with .13 to .253 free, 20 new pods per scale-up.
	if want := 3 * (maxPodHost - 12) / 20; scaleUps != want {
		t.Errorf("%d scale-ups fitted, want %d", scaleUps, want)
	}
	// Replacements take what the scale-ups left, wherever it is.
	for range 1000 {
		if !c.roomForPods(1, -1) {
			break
		}
		c.replacePodChange()
	}
	if c.roomForPods(1, -1) {
		t.Fatal("replacements never filled the other nodes")
	}
	for _, next := range []func() (change, bool){c.replacePodChange, c.drainChange, c.scaleChange} {
		if _, ok := next(); ok {
			t.Error("a change that needs a new pod was made with every other subnet full")
		}
	}
	seen := map[string]bool{}
	for _, p := range c.pods {
		if seen[p.ip] {
			t.Fatalf("address %s given to two pods", p.ip)
		}
		seen[p.ip] = true
	}
	for _, p := range c.pods[len(c.pods)-20:] {
		if p.local() {
			t.Fatalf("new pod %s placed on this node", p.ip)
		}
	}
}

// The minimal writes of a change depend on the profile: without modify a
// load balancer's new backends are a delete and a create.
func TestMinimalWritesPerProfile(t *testing.T) {
	for _, tc := range []struct {
		ch               change
		modify, noModify int
	}{
		{change{kind: kindFlip, lbUpdates: 1}, 1, 2},
		{change{kind: kindFlip, lbUpdates: 1, remoteEndpointWrites: 1}, 2, 3},
		{change{kind: kindServiceCreate, lbCreates: 1, remoteEndpointWrites: 4}, 5, 5},
		{change{kind: kindServiceDelete, lbDeletes: 1, remoteEndpointWrites: 1}, 2, 2},
		{change{kind: kindDrain, lbUpdates: 30, remoteEndpointWrites: 12}, 42, 72},
	} {
		if got := tc.ch.minimalWrites(true); got != tc.modify {
			t.Errorf("%+v with modify: %d writes, want %d", tc.ch, got, tc.modify)
		}
		if got := tc.ch.minimalWrites(false); got != tc.noModify {
			t.Errorf("%+v without modify: %d writes, want %d", tc.ch, got, tc.noModify)
		}
	}
}

func TestNewLocalPodChangeStopsWhenTheSubnetIsFull(t *testing.T) {
	spec := smallSpec()
	spec.PodsPerNode = 251
	c := newCluster(spec)
	for k := range 2 {
		want := addrPlus(podCIDR(thisNode).Addr(), 252+k).String()
		if _, ip, ok := c.newLocalPodChange(); !ok || ip != want {
			t.Fatalf("new pod %d: ok=%v ip=%q, want %s", k, ok, ip, want)
		}
	}
	if _, _, ok := c.newLocalPodChange(); ok {
		t.Fatal("a pod at .254, the overlay source VIP, was accepted")
	}
}

func TestParseFlagsRejectsBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"-services", "0"},
		{"-nodes", "0"},
		{"-pods-per-node", "254"},
		{"-nodes", "5001"},
		{"-mode", "nat"},
		{"-nodes", "1", "-endpoints-per-service", "1", "-drains", "1"},
		{"-drift", "-1"},
		{"-changes-during-lookup", "-1"},
		{"-endpoints-per-service", "50", "-nodes", "2", "-pods-per-node", "10"},
		{"-changes", "-1"},
		{"-hns-latency", "-1ms"},
		{"-pause", "-1ms"},
		{"-memprofile-rate", "-1"},
		{"-cpuprofile-phase", "warm"},
		{"-memprofile-phase", "warm"},
		{"extra"},
	} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("parseFlags(%q) accepted bad input", args)
		}
	}
}

// A pause before a change drops the sync events that came in it (a
// periodic sync's, say), so the change's own sync is the one measured;
// no pause leaves them be, and a cancelled run stops waiting.
func TestIdleDropsTheSyncEventsOfThePause(t *testing.T) {
	n := &node{events: make(chan syncEvent, 4)}
	n.events <- syncEvent{}
	if err := idle(context.Background(), n, 0); err != nil || len(n.events) != 1 {
		t.Fatalf("no pause: err %v, %d events left, want 1", err, len(n.events))
	}
	if err := idle(context.Background(), n, time.Millisecond); err != nil || len(n.events) != 0 {
		t.Fatalf("a pause: err %v, %d events left, want 0", err, len(n.events))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := idle(ctx, n, time.Hour); err == nil {
		t.Fatal("a cancelled pause returned no error")
	}
}

// -memprofile-phase setup writes the heap profile before the cold start,
// the base against which a later phase's profile shows that phase's
// allocations (pprof -base).
func TestHeapProfileAfterSetup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "setup.pb")
	o, err := parseFlags([]string{"-services", "10", "-endpoints-per-service", "2", "-nodes", "2", "-pods-per-node", "5",
		"-changes", "0", "-new-local-pods", "0", "-replacements", "0", "-service-churn", "0", "-scales", "0", "-drains", "0",
		"-drift", "0", "-changes-during-repair", "0", "-quiet", "20ms", "-memprofile", path, "-memprofile-phase", "setup"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("no heap profile after setup: %v", err)
	}
}

// A small run end to end, per mode and profile: HNS ends as the model says
// after every phase, every kind of change makes exactly the minimal writes
// for the profile, the no-op sync writes nothing, the drift repair
// re-creates what was deleted, and a restart writes nothing.
func TestRunSmallClusterHasNoProblems(t *testing.T) {
	for _, mode := range []string{"l2bridge", "overlay"} {
		for _, profile := range []string{"ws2019", "ws2022", "ws2025"} {
			t.Run(mode+"/"+profile, func(t *testing.T) {
				o, err := parseFlags([]string{"-services", "40", "-endpoints-per-service", "5", "-nodes", "4", "-pods-per-node", "12",
					"-changes", "30", "-new-local-pods", "3", "-replacements", "3", "-service-churn", "2", "-scales", "1", "-drains", "1",
					"-drift", "3", "-mode", mode, "-profile", profile, "-quiet", "50ms"})
				if err != nil {
					t.Fatal(err)
				}
				rep, err := run(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				if len(rep.Problems) > 0 {
					t.Fatalf("problems: %q", rep.Problems)
				}
				want := rep.LoadBalancers + rep.RemoteEndpoints // on overlay these count a service-VIP endpoint per Service
				if mode == "overlay" {
					want++ // the source-VIP endpoint
				}
				if rep.ColdHNSWrites != want || rep.LoadBalancers != 40 {
					t.Errorf("cold start: %d writes for %d load balancers and %d remote endpoints", rep.ColdHNSWrites, rep.LoadBalancers, rep.RemoteEndpoints)
				}
				perUpdate := map[string]float64{"ws2019": 2, "ws2022": 2, "ws2025": 1}[profile]
				for kind, want := range map[string]float64{kindScaleUp: perUpdate + 4*5, kindScaleDown: perUpdate + 4*5} {
					if got := rep.ChangesByKind[kind]; got == nil || got.HNSWritesPerChange != want {
						t.Errorf("%s: %+v, want %v HNS writes (one load balancer update, 20 remote endpoints)", kind, got, want)
					}
				}
				for _, kind := range []string{kindFlip, kindReplace, kindServiceCreate, kindServiceDelete, kindDrain} {
					if rep.ChangesByKind[kind] == nil {
						t.Errorf("no %s changes measured", kind)
					}
				}
				if rep.IncrChanges != 30 || rep.NewPodChanges != 3 {
					t.Errorf("changes: %d readiness flips, %d new pods measured", rep.IncrChanges, rep.NewPodChanges)
				}
				if rep.NoopSync == nil || rep.NoopSync.Writes != 0 || rep.Repair == nil || rep.Repair.Writes != 3 {
					t.Errorf("no-op sync %+v, drift repair %+v", rep.NoopSync, rep.Repair)
				}
				if rep.RestartHNSWrites != 0 {
					t.Errorf("restart made %d writes", rep.RestartHNSWrites)
				}
				if l := rep.DuringLookup; l == nil || l.Changes < 1 || l.FrontendMs <= 0 {
					t.Errorf("changes during a lookup: %+v", l)
				}
				// A new Service's frontend is declared, fsynced, before its create.
				if got := rep.ChangesByKind[kindServiceCreate]; rep.ColdStateFileSyncs == 0 || got == nil || got.StateFileSyncsPerChange < 1 {
					t.Errorf("state file fsyncs: %d in the cold start, Services created %+v; want some, at least one per create", rep.ColdStateFileSyncs, got)
				}
			})
		}
	}
}

// The per-object figure divides each change's CPU by the Services and
// EndpointSlices it wrote, then takes percentiles over the changes.
func TestSummarizeReportsCPUPerObjectWritten(t *testing.T) {
	r := summarize([]measured{
		{cpu: 20 * time.Millisecond, apiWrites: 10, stateSyncs: 1}, // a pod replaced: 2 ms per slice
		{cpu: 3 * time.Millisecond, apiWrites: 1},                  // a readiness flip
	})
	if r.CPUMsP99 != 20 || r.CPUPerObjectMsP50 != 2 || r.CPUPerObjectMsP99 != 3 || r.APIWritesPerChange != 5.5 || r.StateFileSyncsPerChange != 0.5 {
		t.Errorf("summary %+v: want p99 20 ms per change, 2 / 3 ms per object written, 5.5 objects per change", r)
	}
}

// The garbage collections counted on a kind's changes are summed: they say
// whether the whole heap's marking (the harness's too) is in its figures.
func TestSummarizeCountsGarbageCollections(t *testing.T) {
	r := summarize([]measured{{gcCycles: 1}, {}, {gcCycles: 2}})
	if r.GCCycles != 3 {
		t.Errorf("summary %+v: want 3 garbage collections", r)
	}
}

// Issue 17's target is read per change kind, per object written.
func TestTargetsIncludeTheCPUPerObjectOfEveryKind(t *testing.T) {
	r := &report{ChangesByKind: map[string]*kindReport{
		kindFlip:  {CPUPerObjectMsP99: 0.8},
		kindDrain: {CPUPerObjectMsP99: 1.2},
	}}
	r.checkTargets()
	if !r.TargetsMet[kindFlip+"_cpu_p99_per_object_le_1ms"] || r.TargetsMet[kindDrain+"_cpu_p99_per_object_le_1ms"] {
		t.Errorf("targets %v: want the flips' met and the drains' missed", r.TargetsMet)
	}
}

// verify reads HNS in place (sim.HNS.Inspect) and still sees what is
// wrong: before the proxier ran, HNS holds none of the load balancers and
// remote endpoints the cluster needs.
func TestVerifyReportsWhatHNSLacks(t *testing.T) {
	spec := smallSpec()
	spec.Overlay = true
	c, n := testNode(t, spec)
	rep := &report{}
	verify(c, n, rep, "before the proxier")
	want := []string{
		fmt.Sprintf("before the proxier: HNS holds 0 remote endpoints, want %d", c.expectedRemoteEndpoints()),
		fmt.Sprintf("before the proxier: HNS holds 0 load balancers, want %d", c.expectedLBs()),
	}
	if !slices.Equal(rep.Problems, want) {
		t.Errorf("problems %q, want %q", rep.Problems, want)
	}
}

// A watch start is the fake API server's work, charged to it (apiCPU),
// and the watch still delivers what is written after the LIST, as an
// informer's does.
func TestWatchStartsAreTheAPIServers(t *testing.T) {
	c, n := testNode(t, smallSpec())
	services := n.kube.CoreV1().Services(c.svcs[0].Namespace)
	list, err := services.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := n.apiCPU.Load()
	w, err := services.Watch(context.Background(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if n.apiCPU.Load() == before {
		t.Error("a watch start charged the fake API server no CPU")
	}
	svc := c.svcs[0].DeepCopy()
	svc.Name = "watched"
	if _, err := services.Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if got := ev.Object.(*v1.Service).Name; ev.Type != watch.Added || got != "watched" {
			t.Errorf("watch delivered %s %s, want the new Service added", ev.Type, got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watch delivered nothing")
	}
}

// testNode is a cluster of spec and its node on ws2022, the proxier not started.
func testNode(t *testing.T, spec clusterSpec) (*cluster, *node) {
	t.Helper()
	c := newCluster(spec)
	profile, err := sim.ProfileByName(sim.ProfileWS2022)
	if err != nil {
		t.Fatal(err)
	}
	n, err := newNode(context.Background(), c, profile, 0, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return c, n
}

// The collection watch's rule: a collection marks between its two pauses,
// and a resumed mark's extra pause is absorbed.
func TestCollectionWatchObserve(t *testing.T) {
	var w collectionWatch
	for i, step := range []struct {
		pauses, cycles uint64
		marking        bool
	}{
		{0, 0, false},
		{1, 0, true},  // sweep termination: marking
		{2, 1, false}, // mark termination: done
		{3, 1, true},
		{4, 1, true}, // a mark termination that resumed the mark
		{5, 2, false},
		{7, 3, false}, // a whole collection between two looks
		{8, 3, true},
		// Resumed and ended between two looks reads as ended and begun
		// again, the far likelier of the two: marking until the next
		// collection's first pause shows the extra one.
		{10, 4, true},
		{11, 4, true},
		{12, 5, false},
	} {
		if got := w.observe(step.pauses, step.cycles); got != step.marking {
			t.Errorf("step %d (%d pauses, %d cycles): marking %v, want %v", i, step.pauses, step.cycles, got, step.marking)
		}
	}
}

// The runtime counts the pauses the watch relies on: a collection adds two
// and leaves nothing marking. A Go release that counts them otherwise
// fails here, not in a benchmark's figures.
func TestCollectionWatchSeesACollection(t *testing.T) {
	var w collectionWatch
	p0, _ := w.look()
	runtime.GC()
	p1, marking := w.look()
	if p1 < p0+2 || marking {
		t.Fatalf("after runtime.GC: %d pauses (was %d), marking %v; want 2 more and not marking", p1, p0, marking)
	}
	if !besideCollection(p0, false, p1) || besideCollection(p1, false, p1) || !besideCollection(p1, true, p1) {
		t.Fatal("besideCollection: a pause between two looks, or a collection marking at the first, is beside; neither is not")
	}
}
