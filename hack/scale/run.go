package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"time"

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
		HNSProfile: profile.Name, HNSLatencyMs: ms(o.latency), GoMaxProcs: runtime.GOMAXPROCS(0),
		ClusterSetupSeconds:  time.Since(setup).Seconds(),
		HeapBeforeProxierMiB: mib(heapLive()),
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

	if err := coldStart(ctx, o, c, n, prof, rep); err != nil {
		return rep, err
	}
	rep.RSSAfterColdMiB = mib(peakRSS())
	rep.HeapAfterColdMiB = mib(heapLive())
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
	cpu0, sim0, t0 := n.proxierCPU(), n.metered.CPU(), time.Now()
	if err := n.start(); err != nil {
		return err
	}
	syncs := 0
	ev, err := n.waitConverged(ctx, o.quiet, func() bool {
		syncs++
		k := n.hns.Counters()
		return k.CountResult(sim.OpCreateLoadBalancer, sim.ResultOK) >= rep.LoadBalancers &&
			k.CountResult(sim.OpCreateEndpoint, sim.ResultOK) >= rep.RemoteEndpoints
	})
	if err != nil {
		return fmt.Errorf("cold start: %w", err)
	}
	prof.end("cold")
	k := n.hns.Counters()
	rep.ColdHNSWrites, rep.ColdHNSLists, rep.ColdHCNCalls = k.Writes(), k.Lists(), k.HCNCalls
	rep.ColdExpectedWrites = rep.LoadBalancers + rep.RemoteEndpoints
	rep.ColdSyncs = syncs
	rep.ColdProxierCPUSeconds = (ev.cpu - cpu0).Seconds()
	rep.ColdSimulatorCPUSeconds = (n.metered.CPU() - sim0).Seconds()
	rep.ColdWallSeconds = ev.stats.End.Sub(t0).Seconds()
	progress("cold start converged in %.1fs wall, %.2fs proxier CPU (simulator %.2fs): %d writes (expected %d), %d lists, %d syncs",
		rep.ColdWallSeconds, rep.ColdProxierCPUSeconds, rep.ColdSimulatorCPUSeconds, rep.ColdHNSWrites, rep.ColdExpectedWrites, rep.ColdHNSLists, syncs)
	if rep.ColdHNSWrites != rep.ColdExpectedWrites {
		rep.problem("cold start made %d HNS writes, want exactly %d (load balancers + remote endpoints): %v", rep.ColdHNSWrites, rep.ColdExpectedWrites, k.Calls)
	}
	verify(c, n, rep, "after cold start")
	return nil
}

// measured is one change as HNS and the CPU clock saw it.
type measured struct {
	cpu, wall                       time.Duration
	writes, lbWrites, epWrites, min int
	lists, endpointLists, hcnCalls  int
}

// measure writes one change and waits for the sync that carried it.
func measure(ctx context.Context, n *node, ch change) (measured, error) {
	before := n.hns.Counters()
	cpu0, t0 := n.proxierCPU(), time.Now()
	if err := n.updateSlice(ctx, ch.slice); err != nil {
		return measured{}, fmt.Errorf("updating EndpointSlice %s/%s: %w", ch.slice.Namespace, ch.slice.Name, err)
	}
	ev, err := n.waitSync(ctx, func(ev syncEvent) bool { return ev.stats.EndpointChanges > 0 })
	if err != nil {
		return measured{}, err
	}
	after := n.hns.Counters()
	return measured{
		cpu: ev.cpu - cpu0, wall: ev.stats.End.Sub(t0),
		writes:        after.Writes() - before.Writes(),
		lbWrites:      delta(before, after, sim.OpCreateLoadBalancer, sim.OpUpdateLoadBalancer, sim.OpDeleteLoadBalancer),
		epWrites:      delta(before, after, sim.OpCreateEndpoint, sim.OpDeleteEndpoint),
		min:           1 + ch.remoteEndpointWrites,
		lists:         after.Lists() - before.Lists(),
		endpointLists: delta(before, after, sim.OpListEndpoints),
		hcnCalls:      after.HCNCalls - before.HCNCalls,
	}, nil
}

func changes(ctx context.Context, o options, c *cluster, n *node, prof *cpuProfiler, rep *report) error {
	if o.changes == 0 {
		return nil
	}
	progress("%d single-endpoint changes", o.changes)
	if err := prof.begin("incr"); err != nil {
		return err
	}
	n.drain()
	var cpu, wall, lbOnlyCPU []time.Duration
	writes, lbWrites, epWrites, expected := 0, 0, 0, 0
	for i := range o.changes {
		ch := c.nextChange()
		m, err := measure(ctx, n, ch)
		if err != nil {
			return fmt.Errorf("change %d: %w", i, err)
		}
		cpu, wall = append(cpu, m.cpu), append(wall, m.wall)
		if ch.remoteEndpointWrites == 0 {
			lbOnlyCPU = append(lbOnlyCPU, m.cpu)
		}
		writes, lbWrites, epWrites, expected = writes+m.writes, lbWrites+m.lbWrites, epWrites+m.epWrites, expected+m.min
		rep.IncrMaxLBWritesPerChange = max(rep.IncrMaxLBWritesPerChange, m.lbWrites)
		if m.writes > m.min {
			rep.IncrChangesAboveMinimum++
		}
		rep.IncrHNSLists += m.lists
		if (i+1)%max(o.changes/10, 1) == 0 {
			progress("  %d/%d changes", i+1, o.changes)
		}
	}
	prof.end("incr")
	nc := float64(o.changes)
	rep.IncrChanges = o.changes
	rep.IncrHNSWritesPerChange = float64(writes) / nc
	rep.IncrLBWritesPerChange = float64(lbWrites) / nc
	rep.IncrEndpointWritesPerChange = float64(epWrites) / nc
	rep.IncrExpectedWritesPerChange = float64(expected) / nc
	rep.IncrProxierCPUMsP50 = ms(percentile(cpu, 50))
	rep.IncrProxierCPUMsP99 = ms(percentile(cpu, 99))
	rep.IncrProxierCPUMsMax = ms(percentile(cpu, 100))
	rep.IncrLBOnlyChanges = len(lbOnlyCPU)
	rep.IncrLBOnlyCPUMsP50 = ms(percentile(lbOnlyCPU, 50))
	rep.IncrLBOnlyCPUMsP99 = ms(percentile(lbOnlyCPU, 99))
	rep.IncrWallMsP50 = ms(percentile(wall, 50))
	rep.IncrWallMsP99 = ms(percentile(wall, 99))
	progress("changes: %.2f writes/change (minimal %.2f), %.2f LB writes/change, %d lists, proxier CPU p50 %.2fms p99 %.2fms",
		rep.IncrHNSWritesPerChange, rep.IncrExpectedWritesPerChange, rep.IncrLBWritesPerChange, rep.IncrHNSLists, rep.IncrProxierCPUMsP50, rep.IncrProxierCPUMsP99)
	if rep.IncrChangesAboveMinimum > 0 {
		rep.problem("%d of %d changes made more HNS writes than the minimum (1 load balancer update plus remote endpoints gained or lost)", rep.IncrChangesAboveMinimum, o.changes)
	}
	if rep.IncrHNSLists > 0 {
		rep.problem("single-endpoint changes listed HNS %d times, want 0", rep.IncrHNSLists)
	}
	verify(c, n, rep, "after the changes")
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
	rep.NewPodCPUMsP50 = ms(percentile(cpu, 50))
	progress("new local pods: %.2f writes/change (minimal %.2f), %d lists of which %d of endpoints (%.0f hcn calls/change), proxier CPU p50 %.2fms",
		rep.NewPodWritesPerChange, rep.NewPodExpectedWritesPerChange, rep.NewPodLists, rep.NewPodEndpointLists, rep.NewPodHCNCallsPerChange, rep.NewPodCPUMsP50)
	if writes > expected {
		rep.problem("new local pods: %d HNS writes, want at most %d", writes, expected)
	}
	verify(c, n, rep, "after the new local pods")
	return nil
}

func delta(before, after sim.Counters, ops ...sim.Op) int {
	n := 0
	for _, op := range ops {
		n += after.CountResult(op, sim.ResultOK) - before.CountResult(op, sim.ResultOK)
	}
	return n
}

// waitSync waits for a sync event that matches and leaves nothing pending.
func (n *node) waitSync(ctx context.Context, match func(syncEvent) bool) (syncEvent, error) {
	timeout := time.NewTimer(changeTimeout)
	defer timeout.Stop()
	matched := false
	for {
		select {
		case ev := <-n.events:
			matched = matched || match(ev)
			if matched && ev.stats.Result.Pending == 0 {
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

// verify compares HNS's contents with the harness's own model: one load
// balancer per Service with its ready endpoints as backends, and a remote
// endpoint for exactly the remote pods some ready endpoint names.
func verify(c *cluster, n *node, rep *report, when string) {
	snap := n.hns.Snapshot()
	byVIP := make(map[string]int, len(c.svcs))
	for i, s := range c.svcs {
		byVIP[s.Spec.ClusterIP] = i
	}
	remote := 0
	for _, e := range snap.Endpoints {
		if e.IsRemote() {
			remote++
		}
	}
	if want := c.expectedRemoteEndpoints(); remote != want {
		rep.problem("%s: HNS holds %d remote endpoints, want %d", when, remote, want)
	}
	if len(snap.LoadBalancers) != c.expectedLBs() {
		rep.problem("%s: HNS holds %d load balancers, want %d", when, len(snap.LoadBalancers), c.expectedLBs())
	}
	wrong := 0
	for _, lb := range snap.LoadBalancers {
		if len(lb.FrontendVIPs) != 1 {
			wrong++
			continue
		}
		i, ok := byVIP[lb.FrontendVIPs[0]]
		if _, err := netip.ParseAddr(lb.FrontendVIPs[0]); err != nil || !ok || len(lb.HostComputeEndpoints) != c.expectedBackends(i) {
			wrong++
		}
	}
	if wrong > 0 {
		rep.problem("%s: %d load balancers have an unknown frontend or the wrong number of backends", when, wrong)
	}
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
