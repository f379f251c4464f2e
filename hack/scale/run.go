package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/hnsproxy/hnsproxy/internal/liveheap"
	"github.com/hnsproxy/hnsproxy/internal/nearestrank"
	"github.com/hnsproxy/hnsproxy/sim"
)

// changeTimeout bounds the wait for one change to reach HNS.
const changeTimeout = time.Minute

func run(ctx context.Context, o options) (*report, error) {
	profile, err := sim.ProfileByName(o.profile)
	if err != nil {
		return nil, err
	}
	prof := &cpuProfiler{phase: o.cpuPhase}
	if o.cpuProfile != "" {
		if prof.file, err = os.Create(o.cpuProfile); err != nil {
			return nil, err
		}
		defer prof.file.Close()
	}
	dir, err := os.MkdirTemp("", "hnsproxy-scale-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	setup := time.Now()
	progress("building %d services × %d endpoints over %d nodes × %d pods", o.spec.Services, o.spec.EndpointsPerService, o.spec.Nodes, o.spec.PodsPerNode)
	c := newCluster(o.spec)
	n, err := newNode(ctx, c, profile, o.latency, dir)
	if err != nil {
		return nil, err
	}
	rep := &report{
		Services: o.spec.Services, Endpoints: o.spec.Services * o.spec.EndpointsPerService,
		Nodes: o.spec.Nodes, PodsPerNode: o.spec.PodsPerNode,
		LoadBalancers: c.expectedLBs(), RemoteEndpoints: c.expectedRemoteEndpoints(),
		Mode:       modeName(o.spec.Overlay),
		HNSProfile: profile.Name, HNSLatencyMs: ms(o.latency), PauseMs: ms(o.pause), GoMaxProcs: runtime.GOMAXPROCS(0),
		ChangesByKind:        map[string]*kindReport{},
		ClusterSetupSeconds:  time.Since(setup).Seconds(),
		HeapBeforeProxierMiB: mib(int64(liveheap.Bytes())),
	}
	for i := range c.members {
		for _, p := range c.members[i] {
			if c.pods[p].local() {
				rep.LocalEndpoints++
			}
		}
	}
	progress("cluster ready in %.1fs: %d load balancers and %d remote endpoints expected, %d endpoints local",
		rep.ClusterSetupSeconds, rep.LoadBalancers, rep.RemoteEndpoints, rep.LocalEndpoints)

	if err := o.heapProfileAfter("setup"); err != nil {
		return rep, err
	}
	if err := coldStart(ctx, o, c, n, prof, rep); err != nil {
		return rep, err
	}
	rep.RSSAfterColdMiB = mib(peakRSS())
	rep.HeapAfterColdMiB = mib(int64(liveheap.Bytes()))
	if err := o.heapProfileAfter("cold"); err != nil {
		return rep, err
	}
	if err := changes(ctx, o, c, n, prof, rep); err != nil {
		return rep, err
	}
	rep.RSSAfterChangesMiB = mib(peakRSS())
	if err := newLocalPods(ctx, o, c, n, prof, rep); err != nil {
		return rep, err
	}
	rep.RSSAfterNewPodsMiB = mib(peakRSS())
	if err := o.heapProfileAfter("newpods"); err != nil {
		return rep, err
	}
	if err := mixes(ctx, o, c, n, prof, rep); err != nil {
		return rep, err
	}
	if err := o.heapProfileAfter("mix"); err != nil {
		return rep, err
	}
	if err := periodic(ctx, o, c, n, prof, rep); err != nil {
		return nil, err
	}
	if err := changesDuringRepair(ctx, o, c, n, rep); err != nil {
		return rep, err
	}
	if err := changesDuringLookup(ctx, o, c, n, rep); err != nil {
		return rep, err
	}
	if err := restart(ctx, o, c, n, prof, rep); err != nil {
		return rep, err
	}
	if err := n.stop(); err != nil {
		rep.problem("proxier.Run returned %v", err)
	}
	if d := n.dropped.Load(); d > 0 {
		rep.problem("%d sync events were dropped; figures may be off", d)
	}
	rep.RSSMiB = mib(peakRSS())
	rep.checkTargets()
	progress("done; peak RSS %.0f MiB", rep.RSSMiB)
	return rep, nil
}

// heapProfileAfter writes the heap profile if phase is the one asked for.
func (o options) heapProfileAfter(phase string) error {
	if o.memProfile == "" || o.memPhase != phase {
		return nil
	}
	return writeHeapProfile(o.memProfile)
}

func (r *report) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	progress("PROBLEM: %s", msg)
	r.Problems = append(r.Problems, msg)
}

func coldStart(ctx context.Context, o options, c *cluster, n *node, prof *cpuProfiler, rep *report) error {
	progress("cold start")
	if err := prof.begin("cold"); err != nil {
		return err
	}
	n.hns.ResetCounters()
	cpu0, sim0, list0, t0 := n.proxierCPU(), n.metered.CPU(), n.listCPU.Load(), time.Now()
	alloc0, gc0, gcCPU0, probe0 := heapAllocated(), gcCycles(), gcCPU(), n.metered.ProbeCPU()
	sys0, faults0 := kernelCPU()
	fsyncs0 := n.stateSyncs.Load()
	if err := n.start(); err != nil {
		return err
	}
	syncs := 0
	ev, err := n.waitConverged(ctx, o.quiet, func() bool {
		syncs++
		k := n.hns.Counters()
		return k.CountResult(sim.OpCreateLoadBalancer, sim.ResultOK) >= rep.LoadBalancers &&
			k.CountResult(sim.OpCreateEndpoint, sim.ResultOK) >= c.expectedOwnEndpoints()
	})
	if err != nil {
		return fmt.Errorf("cold start: %w", err)
	}
	prof.end("cold")
	k := n.hns.Counters()
	rep.ColdHNSWrites, rep.ColdHNSLists, rep.ColdHCNCalls = k.Writes(), k.Lists(), k.HCNCalls
	rep.ColdExpectedWrites = rep.LoadBalancers + c.expectedOwnEndpoints()
	rep.ColdSyncs = syncs
	rep.ColdProxierCPUSeconds = (ev.cpu - cpu0).Seconds()
	rep.ColdSimulatorCPUSeconds = (n.metered.CPU() - sim0).Seconds()
	rep.ColdAPIListCPUSeconds = time.Duration(n.listCPU.Load() - list0).Seconds()
	rep.ColdWallSeconds = ev.stats.End.Sub(t0).Seconds()
	rep.ColdAllocatedMiB, rep.ColdGCCycles = mib(int64(heapAllocated()-alloc0)), gcCycles()-gc0
	rep.ColdGCCPUSeconds = (gcCPU() - gcCPU0).Seconds()
	rep.ColdStateFileSyncs = n.stateSyncs.Load() - fsyncs0
	sys, faults := kernelCPU()
	rep.ColdKernelCPUSeconds, rep.ColdPageFaults = (sys - sys0).Seconds(), faults-faults0
	rep.ColdMeterProbeCPUSeconds, rep.MeterProbeNs = (n.metered.ProbeCPU() - probe0).Seconds(), float64(n.metered.probe.Nanoseconds())
	progress("cold start converged in %.1fs wall, %.2fs proxier CPU (of which the fake API server's LISTs %.2fs; simulator %.2fs apart): %d writes (expected %d), %d lists, %d syncs",
		rep.ColdWallSeconds, rep.ColdProxierCPUSeconds, rep.ColdAPIListCPUSeconds, rep.ColdSimulatorCPUSeconds, rep.ColdHNSWrites, rep.ColdExpectedWrites, rep.ColdHNSLists, syncs)
	if rep.ColdHNSWrites != rep.ColdExpectedWrites {
		rep.problem("cold start made %d HNS writes, want exactly %d (load balancers + remote endpoints, on overlay + the source-VIP endpoint): %v", rep.ColdHNSWrites, rep.ColdExpectedWrites, k.Calls)
	}
	verify(c, n, rep, "after cold start")
	return nil
}

// measured is one change as HNS and the CPU clock saw it.
type measured struct {
	cpu, wall                       time.Duration
	writes, lbWrites, epWrites, min int
	apiWrites                       int
	lists, endpointLists, hcnCalls  int
	// stateSyncs are the state file's fsyncs from the change's first API
	// write to its sync's end: each is a declaration made durable before a
	// create, or a withdrawal the sync before it left.
	stateSyncs int
	// gcCycles are the garbage collections completed since the change
	// before it ended (measureChanges).
	gcCycles uint64
	// beside is whether a garbage collection marked while the change ran.
	beside bool
}

// measure makes one change's API writes and waits for the syncs that
// carried them all and left nothing pending.
func measure(ctx context.Context, n *node, ch change) (measured, error) {
	before, fsyncs0 := n.hns.Counters(), n.stateSyncs.Load()
	pauses0, marking0 := n.collections.look()
	cpu0, t0 := n.proxierCPU(), n.clock.Now() // the clock of ev.stats.End, which a repair phase steps
	delivered := n.delivered.Load()
	for i, w := range ch.writes {
		n.awaitDelivery(delivered + int64(i))
		if err := n.apply(ctx, w); err != nil {
			return measured{}, fmt.Errorf("%s: writing the API: %w", ch.kind, err)
		}
	}
	seen := 0
	ev, err := n.waitSync(ctx, true, func(ev syncEvent) bool {
		seen += ev.stats.EndpointChanges + ev.stats.ServiceChanges
		return seen >= len(ch.writes)
	})
	if err != nil {
		return measured{}, err
	}
	after := n.hns.Counters()
	pauses1, _ := n.collections.look()
	return measured{
		cpu: ev.cpu - cpu0, wall: ev.stats.End.Sub(t0),
		writes:        after.Writes() - before.Writes(),
		lbWrites:      delta(before, after, sim.OpCreateLoadBalancer, sim.OpUpdateLoadBalancer, sim.OpDeleteLoadBalancer),
		epWrites:      delta(before, after, sim.OpCreateEndpoint, sim.OpDeleteEndpoint),
		min:           ch.minimalWrites(n.features.ModifyLoadBalancer),
		apiWrites:     len(ch.writes),
		lists:         after.Lists() - before.Lists(),
		endpointLists: delta(before, after, sim.OpListEndpoints),
		hcnCalls:      after.HCNCalls - before.HCNCalls,
		stateSyncs:    int(n.stateSyncs.Load() - fsyncs0),
		beside:        besideCollection(pauses0, marking0, pauses1),
	}, nil
}

// idle waits d before a change (nothing when d is 0) and drops the sync
// events of the wait, so the change is measured as one arriving after idle
// time: the caches its work reads cold, as on a node whose changes come
// seconds apart (docs/benchmarks.md).
func idle(ctx context.Context, n *node, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	n.drain()
	return nil
}

// kindReport sums the changes of one kind.
type kindReport struct {
	Changes                 int     `json:"changes"`
	APIWritesPerChange      float64 `json:"api_writes_per_change"`
	HNSWritesPerChange      float64 `json:"hns_writes_per_change"`
	ExpectedWritesPerChange float64 `json:"expected_writes_per_change"`
	// ChangesOffMinimum made more HNS writes than the minimum, or fewer
	// (then the harness's model is wrong): both are problems.
	ChangesOffMinimum int     `json:"changes_off_minimum_writes"`
	HNSLists          int     `json:"hns_lists"`
	HCNCallsPerChange float64 `json:"hcn_calls_per_change"`
	CPUMsP50          float64 `json:"proxier_cpu_ms_p50"`
	CPUMsP99          float64 `json:"proxier_cpu_ms_p99"`
	CPUMsMax          float64 `json:"proxier_cpu_ms_max"`
	// CPUPerObject is the unit issue 17's 1 ms target is stated in: a
	// change's CPU divided by the Services and EndpointSlices it wrote (a
	// pod replaced writes about ten slices, a node drained a thousand), the
	// percentiles taken over changes. For a one-object change (a readiness
	// flip, a scale) it equals the per-change figure.
	CPUPerObjectMsP50 float64 `json:"proxier_cpu_ms_per_object_p50"`
	CPUPerObjectMsP99 float64 `json:"proxier_cpu_ms_per_object_p99"`
	WallMsP50         float64 `json:"wall_ms_p50"`
	WallMsP99         float64 `json:"wall_ms_p99"`
	// GCCycles are the garbage collections that completed in the phase,
	// each counted on the first of its changes to end after it: the
	// process's whole heap (the harness's fake API server and model too,
	// about 70 MiB of 170 at 10,000 Services) is marked in each, and the
	// marking's CPU counts as the proxier's for the changes it ran beside.
	// So 0 says no collection was charged to these changes (one still
	// marking when the phase ends is not seen); more says some were, not
	// to which change.
	GCCycles uint64 `json:"gc_cycles"`
	// BesideCollections are the changes a garbage collection marked beside
	// (collectionWatch), one still marking when the phase ends included;
	// CPUPerObjectMsP99Apart is the per-object p99 of the others: the
	// proxier's own tail without the collector's lumps, which the p99
	// above includes.
	BesideCollections      int     `json:"changes_beside_collections"`
	CPUPerObjectMsP99Apart float64 `json:"proxier_cpu_ms_per_object_p99_apart_from_collections"`
	// StateFileSyncsPerChange are the state file's fsyncs per change: on
	// this machine each costs about 0.1 to 0.2 ms of the process's (kernel)
	// CPU, charged to the change (docs/benchmarks-history.md).
	StateFileSyncsPerChange float64 `json:"state_file_syncs_per_change"`
}

func summarize(all []measured) *kindReport {
	r := &kindReport{Changes: len(all)}
	var cpu, perObject, perObjectApart, wall []time.Duration
	api, writes, expected, hcn, fsyncs := 0, 0, 0, 0, 0
	for _, m := range all {
		fsyncs += m.stateSyncs
		cpu, wall = append(cpu, m.cpu), append(wall, m.wall)
		perObject = append(perObject, m.cpu/time.Duration(max(m.apiWrites, 1)))
		if m.beside {
			r.BesideCollections++
		} else {
			perObjectApart = append(perObjectApart, perObject[len(perObject)-1])
		}
		api, writes, expected, hcn = api+m.apiWrites, writes+m.writes, expected+m.min, hcn+m.hcnCalls
		r.HNSLists += m.lists
		r.GCCycles += m.gcCycles
		if m.writes != m.min {
			r.ChangesOffMinimum++
		}
	}
	nc := float64(max(len(all), 1))
	r.APIWritesPerChange, r.HNSWritesPerChange = float64(api)/nc, float64(writes)/nc
	r.ExpectedWritesPerChange, r.HCNCallsPerChange = float64(expected)/nc, float64(hcn)/nc
	r.StateFileSyncsPerChange = float64(fsyncs) / nc
	r.CPUMsP50, r.CPUMsP99, r.CPUMsMax = ms(nearestrank.Percentile(cpu, 50)), ms(nearestrank.Percentile(cpu, 99)), ms(nearestrank.Percentile(cpu, 100))
	r.CPUPerObjectMsP50, r.CPUPerObjectMsP99 = ms(nearestrank.Percentile(perObject, 50)), ms(nearestrank.Percentile(perObject, 99))
	r.CPUPerObjectMsP99Apart = ms(nearestrank.Percentile(perObjectApart, 99))
	r.WallMsP50, r.WallMsP99 = ms(nearestrank.Percentile(wall, 50)), ms(nearestrank.Percentile(wall, 99))
	return r
}

// measureChanges makes count changes drawn from next, one at a time, and
// records a summary per change kind (a mix may alternate two kinds, as
// create and delete); next says when no such change is possible. With a
// pause, each change waits that long first, unmeasured.
func measureChanges(ctx context.Context, c *cluster, n *node, rep *report, mix string, count int, pause time.Duration, next func() (change, bool)) (map[string][]measured, error) {
	n.drain()
	byKind := map[string][]measured{}
	var kinds []string
	gcSeen := gcCycles()
	for i := range count {
		ch, ok := next()
		if !ok {
			rep.problem("%s: no such change possible in this cluster after %d (pods replaced, scaled up or drained need room in other nodes' pod subnets, whose addresses a run never reuses: fewer changes, more -nodes or a lower -pods-per-node)", mix, i)
			break
		}
		if err := idle(ctx, n, pause); err != nil {
			return byKind, err
		}
		m, err := measure(ctx, n, ch)
		if err != nil {
			return byKind, fmt.Errorf("%s %d: %w", ch.kind, i, err)
		}
		gc := gcCycles()
		m.gcCycles, gcSeen = gc-gcSeen, gc
		if _, seen := byKind[ch.kind]; !seen {
			kinds = append(kinds, ch.kind)
		}
		byKind[ch.kind] = append(byKind[ch.kind], m)
	}
	for _, kind := range kinds {
		r := summarize(byKind[kind])
		rep.ChangesByKind[kind] = r
		progress("%s: %d changes, %.2f API writes and %.2f HNS writes each (minimal %.2f), %d lists, proxier CPU p50 %.2fms p99 %.2fms (per object written p50 %.2fms p99 %.2fms; p99 %.2fms apart from the %d changes a collection ran beside), wall p50 %.2fms, %d garbage collections, %.2f state file fsyncs each",
			kind, r.Changes, r.APIWritesPerChange, r.HNSWritesPerChange, r.ExpectedWritesPerChange, r.HNSLists, r.CPUMsP50, r.CPUMsP99, r.CPUPerObjectMsP50, r.CPUPerObjectMsP99, r.CPUPerObjectMsP99Apart, r.BesideCollections, r.WallMsP50, r.GCCycles, r.StateFileSyncsPerChange)
		if r.ChangesOffMinimum > 0 {
			rep.problem("%s: %d of %d changes made other than the minimal HNS writes for %s", kind, r.ChangesOffMinimum, r.Changes, rep.HNSProfile)
		}
		if r.HNSLists > 0 {
			rep.problem("%s: listed HNS %d times, want 0", kind, r.HNSLists)
		}
	}
	verify(c, n, rep, "after the "+mix+" changes")
	return byKind, nil
}

func changes(ctx context.Context, o options, c *cluster, n *node, prof *cpuProfiler, rep *report) error {
	if o.changes == 0 {
		return nil
	}
	progress("%d single-endpoint changes", o.changes)
	if err := prof.begin("incr"); err != nil {
		return err
	}
	byKind, err := measureChanges(ctx, c, n, rep, kindFlip, o.changes, o.pause, func() (change, bool) { return c.nextChange(), true })
	if err != nil {
		return err
	}
	prof.end("incr")
	flips := byKind[kindFlip]
	var lbOnlyCPU []time.Duration
	lbWrites, epWrites := 0, 0
	for _, m := range flips {
		if m.epWrites == 0 {
			lbOnlyCPU = append(lbOnlyCPU, m.cpu)
		}
		lbWrites, epWrites = lbWrites+m.lbWrites, epWrites+m.epWrites
		rep.IncrMaxLBWritesPerChange = max(rep.IncrMaxLBWritesPerChange, m.lbWrites)
	}
	r := rep.ChangesByKind[kindFlip]
	nc := float64(len(flips))
	rep.IncrChanges = len(flips)
	rep.IncrHNSWritesPerChange, rep.IncrExpectedWritesPerChange = r.HNSWritesPerChange, r.ExpectedWritesPerChange
	rep.IncrLBWritesPerChange = float64(lbWrites) / nc
	rep.IncrEndpointWritesPerChange = float64(epWrites) / nc
	rep.IncrChangesAboveMinimum, rep.IncrHNSLists = r.ChangesOffMinimum, r.HNSLists
	rep.IncrProxierCPUMsP50, rep.IncrProxierCPUMsP99, rep.IncrProxierCPUMsMax = r.CPUMsP50, r.CPUMsP99, r.CPUMsMax
	rep.IncrLBOnlyChanges = len(lbOnlyCPU)
	rep.IncrLBOnlyCPUMsP50 = ms(nearestrank.Percentile(lbOnlyCPU, 50))
	rep.IncrLBOnlyCPUMsP99 = ms(nearestrank.Percentile(lbOnlyCPU, 99))
	rep.IncrWallMsP50, rep.IncrWallMsP99 = r.WallMsP50, r.WallMsP99
	return nil
}

// mixes measures the changes beyond readiness flips: pods replaced on
// other nodes, Services created and deleted, a Service scaled up fivefold
// and back, nodes drained.
func mixes(ctx context.Context, o options, c *cluster, n *node, prof *cpuProfiler, rep *report) error {
	if err := prof.begin("mix"); err != nil {
		return err
	}
	defer prof.end("mix")
	always := func(f func() change) func() (change, bool) {
		return func() (change, bool) { return f(), true }
	}
	for _, k := range []struct {
		kind  string
		count int
		next  func() (change, bool)
	}{
		{kindReplace, o.replacements, c.replacePodChange},
		{"service_churn", 2 * o.serviceChurn, always(c.serviceChurn)},
		{"scale", 2 * o.scales, c.scaleChange},
		{kindDrain, o.drains, c.drainChange},
	} {
		if k.count == 0 {
			continue
		}
		progress("%d changes: %s", k.count, k.kind)
		if _, err := measureChanges(ctx, c, n, rep, k.kind, k.count, o.pause, k.next); err != nil {
			return err
		}
	}
	return nil
}

// newLocalPods replaces endpoints with brand-new pods on this node, whose
// local HNS endpoints the harness first makes as the CNI would (outside the
// measurement). The proxier learns a local endpoint's HNS ID only from HNS,
// so these changes are reported apart from the readiness flips.
func newLocalPods(ctx context.Context, o options, c *cluster, n *node, prof *cpuProfiler, rep *report) error {
	if o.newLocalPods == 0 {
		return nil
	}
	progress("%d endpoints replaced by new pods on this node", o.newLocalPods)
	if err := prof.begin("newpods"); err != nil {
		return err
	}
	defer prof.end("newpods")
	n.drain()
	var cpu []time.Duration
	writes, expected, hcn := 0, 0, 0
	for i := range o.newLocalPods {
		ch, ip, ok := c.newLocalPodChange()
		if !ok {
			break
		}
		if err := createLocalEndpoint(ctx, n.hns, n.networkID, ip); err != nil {
			return err
		}
		m, err := measure(ctx, n, ch)
		if err != nil {
			return fmt.Errorf("new local pod %d: %w", i, err)
		}
		cpu = append(cpu, m.cpu)
		writes, expected, hcn = writes+m.writes, expected+m.min, hcn+m.hcnCalls
		rep.NewPodLists += m.lists
		rep.NewPodEndpointLists += m.endpointLists
		rep.NewPodChanges++
	}
	if rep.NewPodChanges == 0 {
		return nil
	}
	nc := float64(rep.NewPodChanges)
	rep.NewPodWritesPerChange = float64(writes) / nc
	rep.NewPodExpectedWritesPerChange = float64(expected) / nc
	rep.NewPodHCNCallsPerChange = float64(hcn) / nc
	rep.NewPodCPUMsP50 = ms(nearestrank.Percentile(cpu, 50))
	progress("new local pods: %.2f writes/change (minimal %.2f), %d lists of which %d of endpoints (%.0f hcn calls/change), proxier CPU p50 %.2fms",
		rep.NewPodWritesPerChange, rep.NewPodExpectedWritesPerChange, rep.NewPodLists, rep.NewPodEndpointLists, rep.NewPodHCNCallsPerChange, rep.NewPodCPUMsP50)
	if writes > expected {
		rep.problem("new local pods: %d HNS writes, want at most %d", writes, expected)
	}
	verify(c, n, rep, "after the new local pods")
	return nil
}

// periodic measures a sync with nothing changed (the periodic sync every
// --sync-period), then a drift repair after -drift load balancers were
// deleted out of band (as `hnsdiag delete loadbalancers` does): the
// proxier's clock is moved past the repair period, a sync starts the
// repair (which lists HNS beside the sync loop), and the sync after it
// re-creates what went missing. The phase's CPU and wall time cover all
// three: the repair's judging of its listing is the proxier's work too (the
// simulator's side of the listing is metered out, as everywhere).
func periodic(ctx context.Context, o options, c *cluster, n *node, prof *cpuProfiler, rep *report) error {
	progress("a periodic sync with nothing changed, then a drift repair of %d deleted load balancers", o.drift)
	n.drain()
	noop := timeSync(ctx, n, func() {})
	rep.NoopSync = &noop
	if noop.Writes != 0 || noop.Lists != 0 {
		rep.problem("a sync with nothing changed made %d HNS writes and %d lists, want 0 and 0", noop.Writes, noop.Lists)
	}
	if err := prof.begin("repair"); err != nil {
		return err
	}
	lbs := n.hns.Snapshot().LoadBalancers
	drift := min(o.drift, len(lbs))
	for i := range drift { // a random sample without repeats
		j := i + c.rng.IntN(len(lbs)-i)
		lbs[i], lbs[j] = lbs[j], lbs[i]
		if err := n.hns.DeleteLoadBalancerOutOfBand(lbs[i].ID); err != nil {
			return fmt.Errorf("deleting a load balancer out of band: %w", err)
		}
	}
	// The sync that finds the repair due starts it beside the sync loop;
	// the sync after it ends programs what it found.
	repair := timeSync(ctx, n, func() {
		n.clock.advance(repairPeriod)
		n.proxier.Sync(ctx)
		n.proxier.WaitForRepair()
	})
	prof.end("repair")
	rep.Repair = &repair
	progress("no-op sync: %.2fms proxier CPU, %d hcn calls; drift repair: %d writes (drift %d), %d lists, %d hcn calls, %.2fs proxier CPU, %.2fs wall",
		noop.CPUMs, noop.HCNCalls, repair.Writes, drift, repair.Lists, repair.HCNCalls, repair.CPUMs/1000, repair.WallMs/1000)
	if repair.Writes != drift {
		rep.problem("drift repair made %d HNS writes, want %d (the load balancers deleted out of band)", repair.Writes, drift)
	}
	if repair.Lists == 0 {
		rep.problem("drift repair listed nothing: no repair ran")
	}
	verify(c, n, rep, "after the drift repair")
	return nil
}

// changesDuringRepair measures readiness flips made while a drift repair
// lists HNS beside the sync loop, each from its API write to the end of
// the sync that carried it (its network programming latency): what a
// change waits behind a repair. The listing waits 1 + 3 RPC latencies per
// object (-hns-latency), so with the 0.2 ms model a repair at 10,000
// Services lists for seconds; without latency few flips fit in it. Only
// flips made before the repair ended count.
func changesDuringRepair(ctx context.Context, o options, c *cluster, n *node, rep *report) error {
	if o.duringRepair == 0 {
		return nil
	}
	progress("up to %d single-endpoint changes while a drift repair lists HNS", o.duringRepair)
	n.drain()
	n.clock.advance(repairPeriod)
	n.proxier.Sync(ctx) // finds the repair due and starts it beside the sync loop
	repaired := make(chan time.Time, 1)
	go func() {
		n.proxier.WaitForRepair()
		repaired <- time.Now()
	}()
	type flip struct {
		start time.Time
		m     measured
	}
	var flips []flip
	var end time.Time
	for end.IsZero() && len(flips) < o.duringRepair {
		start := time.Now()
		m, err := measure(ctx, n, c.nextChange())
		if err != nil {
			return fmt.Errorf("a change during a repair: %w", err)
		}
		flips = append(flips, flip{start, m})
		select {
		case end = <-repaired:
		default:
		}
	}
	if end.IsZero() {
		end = <-repaired
	}
	var during []measured
	for _, f := range flips {
		if f.start.Before(end) {
			during = append(during, f.m)
		}
	}
	r := summarize(during)
	rep.DuringRepair = r
	progress("%d changes during the repair: %.2f writes/change (minimal %.2f), wall p50 %.1fms p99 %.1fms, proxier CPU p50 %.2fms",
		r.Changes, r.HNSWritesPerChange, r.ExpectedWritesPerChange, r.WallMsP50, r.WallMsP99, r.CPUMsP50)
	if r.ChangesOffMinimum > 0 {
		rep.problem("changes during a repair: %d made other than their minimal writes", r.ChangesOffMinimum)
	}
	n.drain()
	verify(c, n, rep, "after the changes during a repair")
	return nil
}

// syncReport is one sync the harness ran itself, as the sync loop would.
type syncReport struct {
	Writes   int     `json:"hns_writes"`
	Lists    int     `json:"hns_lists"`
	HCNCalls int     `json:"hcn_calls"`
	CPUMs    float64 `json:"proxier_cpu_ms"`
	WallMs   float64 `json:"wall_ms"`
}

// timeSync runs before, then one proxier Sync on this goroutine, and
// measures both.
func timeSync(ctx context.Context, n *node, before func()) syncReport {
	k0 := n.hns.Counters()
	cpu0, t0 := n.proxierCPU(), time.Now()
	before()
	n.proxier.Sync(ctx)
	cpu, wall := n.proxierCPU()-cpu0, time.Since(t0)
	k := n.hns.Counters()
	return syncReport{
		Writes: k.Writes() - k0.Writes(), Lists: k.Lists() - k0.Lists(), HCNCalls: k.HCNCalls - k0.HCNCalls,
		CPUMs: ms(cpu), WallMs: ms(wall),
	}
}

func delta(before, after sim.Counters, ops ...sim.Op) int {
	n := 0
	for _, op := range ops {
		n += after.CountResult(op, sim.ResultOK) - before.CountResult(op, sim.ResultOK)
	}
	return n
}

// waitSync waits for a sync event that matches and, if settled, leaves
// nothing pending.
func (n *node) waitSync(ctx context.Context, settled bool, match func(syncEvent) bool) (syncEvent, error) {
	timeout := time.NewTimer(changeTimeout)
	defer timeout.Stop()
	matched := false
	for {
		select {
		case ev := <-n.events:
			matched = matched || match(ev)
			if matched && (!settled || ev.stats.Result.Pending == 0) {
				return ev, nil
			}
		case <-timeout.C:
			return syncEvent{}, fmt.Errorf("no converged sync within %s", changeTimeout)
		case err := <-n.done:
			return syncEvent{}, fmt.Errorf("proxier stopped: %v", err)
		case <-ctx.Done():
			return syncEvent{}, ctx.Err()
		}
	}
}

func restart(ctx context.Context, o options, c *cluster, n *node, prof *cpuProfiler, rep *report) error {
	progress("restart with nothing changed")
	if err := n.stop(); err != nil {
		return fmt.Errorf("stopping the proxier: %w", err)
	}
	if err := prof.begin("restart"); err != nil {
		return err
	}
	// A real restart is a new process, which starts without the old
	// proxier's heap; in this process that heap is garbage the collector has
	// not yet returned, and it would count twice in the peak RSS.
	runtime.GC()
	debug.FreeOSMemory()
	n.drain()
	n.hns.ResetCounters()
	cpu0, t0 := n.proxierCPU(), time.Now()
	if err := n.start(); err != nil {
		return err
	}
	ev, err := n.waitConverged(ctx, o.quiet, func() bool { return true })
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	prof.end("restart")
	k := n.hns.Counters()
	rep.RestartHNSWrites, rep.RestartHNSLists = k.Writes(), k.Lists()
	rep.RestartProxierCPUSecs = (ev.cpu - cpu0).Seconds()
	rep.RestartWallSeconds = ev.stats.End.Sub(t0).Seconds()
	progress("restart converged in %.1fs wall, %.2fs proxier CPU: %d writes, %d lists",
		rep.RestartWallSeconds, rep.RestartProxierCPUSecs, rep.RestartHNSWrites, rep.RestartHNSLists)
	if rep.RestartHNSWrites != 0 {
		rep.problem("restart with nothing changed made %d HNS writes, want 0: %v", rep.RestartHNSWrites, k.Calls)
	}
	verify(c, n, rep, "after the restart")
	return nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	runtime.GC() // the profile shows live objects, not the last cycle's
	return pprof.WriteHeapProfile(f)
}
