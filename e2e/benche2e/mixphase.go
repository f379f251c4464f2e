//go:build linux && benche2e

package main

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/internal/nearestrank"
)

// The mix phase prices, in hnsproxy's process CPU like the CPU phase, the
// changes of issue 17's mix beyond readiness flips that the real process
// makes differently from them: a Service group scaled from its pods to
// scaleTo and back (the EndpointSlice controller writes each slice as
// many times as it sees fit, each write a bigger load balancer), and a
// Service created and deleted (a load balancer made and dropped). A pod
// replaced by one on another node is, to the real process, a flip of the
// new pod and one of the old: the controller writes each in its own
// slice update. The unit is issue 17's: one Service or EndpointSlice
// written, counted by the bench's own watch.

// mixProfileSeconds is how much of the mix phase a CPU profile covers
// (with -heap-profiles: cpu-mix.pprof).
const mixProfileSeconds = 60

// scaleTo is the pods a scaled group has at its peak (issue 17: 10 → 50 → 10).
const scaleTo = 50

// Mix kinds, the keys of the report's mix.
const (
	mixScaleUp       = "scaleUp"
	mixScaleDown     = "scaleDown"
	mixServiceCreate = "serviceCreate"
	mixServiceDelete = "serviceDelete"
)

// mixKind is one kind's figures: each change's CPU per object written,
// and every change's CPU, objects, HNS writes and start in order, so that
// a collection (tens of milliseconds in one change) can be told from a
// tail. The changes a collection ran in (gctrace.go) are listed by their
// place in the series, and the p99 is also given over the others, per
// object and per HNS write: how many HNS objects one slice write carries
// is the EndpointSlice controller's choice (one write of 40 new pods, or
// three of 13), and only the second unit does not move with it.
type mixKind struct {
	Changes                            int       `json:"changes"`
	ObjectsPerChange                   float64   `json:"objectsPerChange"`
	PerObjectP50Ms                     float64   `json:"perObjectP50Ms"`
	PerObjectP99Ms                     float64   `json:"perObjectP99Ms"`
	PerObjectMaxMs                     float64   `json:"perObjectMaxMs"`
	CPUPerChangeMs                     []float64 `json:"cpuPerChangeMs"`
	ObjectsWritten                     []int     `json:"objectsWritten"`
	HNSWritten                         []int     `json:"hnsWritten"`
	StartSeconds                       []float64 `json:"startSeconds"`
	ChangesWithCollections             []int     `json:"changesWithCollections,omitempty"`
	PerObjectP99ApartFromCollectionsMs float64   `json:"perObjectP99ApartFromCollectionsMs"`
	// PerHNSWriteP99ApartFromCollectionsMs is over the changes that wrote
	// to HNS.
	PerHNSWriteP99ApartFromCollectionsMs float64 `json:"perHNSWriteP99ApartFromCollectionsMs"`
}

// mixSample is one change: its CPU, the API objects it wrote, the HNS
// writes hnsproxy made for it, whether a collection ran in it, and when
// it began, from the phase's start (so that a tail can be set against
// what runs on a period: the periodic sync, drift repairs).
type mixSample struct {
	cpu        time.Duration
	objects    int
	hnsWrites  int
	collection bool
	at         time.Duration
}

func figuresOf(samples []mixSample) mixKind {
	k := mixKind{Changes: len(samples)}
	if len(samples) == 0 {
		return k
	}
	per := make([]time.Duration, 0, len(samples))
	var apart, apartPerWrite []time.Duration
	objects := 0
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for i, s := range samples {
		p := s.cpu / time.Duration(max(1, s.objects))
		per = append(per, p)
		if s.collection {
			k.ChangesWithCollections = append(k.ChangesWithCollections, i)
		} else {
			apart = append(apart, p)
			if s.hnsWrites > 0 {
				apartPerWrite = append(apartPerWrite, s.cpu/time.Duration(s.hnsWrites))
			}
		}
		objects += s.objects
		k.CPUPerChangeMs = append(k.CPUPerChangeMs, ms(s.cpu))
		k.ObjectsWritten = append(k.ObjectsWritten, s.objects)
		k.HNSWritten = append(k.HNSWritten, s.hnsWrites)
		k.StartSeconds = append(k.StartSeconds, s.at.Seconds())
	}
	k.ObjectsPerChange = float64(objects) / float64(len(samples))
	k.PerObjectP50Ms = ms(nearestrank.Percentile(per, 50))
	k.PerObjectP99Ms = ms(nearestrank.Percentile(per, 99))
	k.PerObjectMaxMs = ms(nearestrank.Percentile(per, 100))
	if len(apart) > 0 {
		k.PerObjectP99ApartFromCollectionsMs = ms(nearestrank.Percentile(apart, 99))
	}
	if len(apartPerWrite) > 0 {
		k.PerHNSWriteP99ApartFromCollectionsMs = ms(nearestrank.Percentile(apartPerWrite, 99))
	}
	return k
}

// extraPod is the name and number (for podPlace) of a scaled group's
// extra pod i: numbers past every loaded pod's, the same for each group,
// as a group is scaled back down before the next goes up.
func (l layout) extraPod(g, i int) (name string, n int) {
	return fmt.Sprintf("x-%d-%d", g, i), l.pods() + i
}

// extraPods are the pods a scaled group adds.
func (l layout) extraPods() int { return max(0, scaleTo-l.podsPerGroup) }

// mixPhase scales groups groups up and down and creates and deletes as
// many Services, pricing each change. A change an HNS listing (a drift
// repair's) overlapped is not priced (its CPU is the listing's): one whose
// span hnsproxy's log shows a listing start or end in, or HNS answered a
// listing in; and no change starts while the log shows one under way.
func (m *measure) mixPhase(node *framework.Node, groups int) (map[string]mixKind, int, error) {
	meter := newCPUMeter(node.Proxy.PID())
	if err := meter.calibrate(); err != nil {
		return nil, 0, err
	}
	samples := map[string][]mixSample{}
	discarded := 0
	began := time.Now()
	plog := &proxyLog{path: node.Proxy.LogPath()}
	if _, err := plog.read(); err != nil {
		return nil, 0, err
	}
	// settled waits until no listing is under way and the process has
	// gone quiet after it: a change starts on an idle process.
	settled := func() (logTally, error) {
		if _, err := plog.awaitNoListing(m.ctx, 20*time.Millisecond, listingWait); err != nil {
			return logTally{}, err
		}
		if _, err := meter.quiet(); err != nil {
			return logTally{}, err
		}
		return plog.read()
	}
	price := func(kind string, names []string, services int, do func() error) error {
		log0, err := settled()
		if err != nil {
			return err
		}
		hns0, err := node.Sim.Stats(m.ctx)
		if err != nil {
			return err
		}
		written := m.slices.written(names)
		start, err := meter.take()
		if err != nil {
			return err
		}
		if err := do(); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		end, err := meter.quiet()
		if err != nil {
			return err
		}
		hns, err := node.Sim.Stats(m.ctx)
		if err != nil {
			return err
		}
		log1, err := plog.read()
		if err != nil {
			return err
		}
		if log1.listingLines(log0) || listings(hns) != listings(hns0) {
			discarded++ // a listing's CPU; the next change waits for it to end
			return nil
		}
		objects := services + m.slices.written(names) - written
		samples[kind] = append(samples[kind], mixSample{cpu: meter.cost(start, end), objects: objects, hnsWrites: hns.Writes() - hns0.Writes(),
			collection: log1.collections > log0.collections, at: start.at.Sub(began)})
		return nil
	}
	for s := range groups {
		g := s * max(1, m.l.groups()/groups) % m.l.groups()
		names, vips := m.l.group(g, m.vips)
		if m.l.extraPods() > 0 {
			if err := price(mixScaleUp, names, 0, func() error { return m.scale(g, vips, true) }); err != nil {
				return nil, discarded, err
			}
			if err := price(mixScaleDown, names, 0, func() error { return m.scale(g, vips, false) }); err != nil {
				return nil, discarded, err
			}
		}
		name := fmt.Sprintf("churn-%d", s)
		var vip string
		if err := price(mixServiceCreate, []string{name}, 1, func() (err error) {
			vip, err = m.createService(name, g)
			return err
		}); err != nil {
			return nil, discarded, err
		}
		if err := price(mixServiceDelete, []string{name}, 1, func() error { return m.deleteService(name, vip) }); err != nil {
			return nil, discarded, err
		}
	}
	out := map[string]mixKind{}
	for kind, s := range samples {
		out[kind] = figuresOf(s)
	}
	return out, discarded, nil
}

// scale adds group g's extra pods (each created, then made Running and
// Ready as a kubelet would) or deletes them at once (no kubelet confirms
// a graceful delete here), and waits until HNS balances each of the
// group's VIPs to its pods.
func (m *measure) scale(g int, vips []string, up bool) error {
	extra := m.l.extraPods()
	err := parallel(extra, workers, func(i int) error {
		name, n := m.l.extraPod(g, i)
		if up {
			return createPodNamed(m.ctx, m.admin, m.l, n, name, groupName(g))
		}
		zero := int64(0)
		return m.admin.CoreV1().Pods(namespace).Delete(m.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
	if err != nil {
		return err
	}
	want := m.l.podsPerGroup
	if up {
		want += extra
	}
	_, err = m.view.waitFor(m.ctx, vips, applyWait, func(ips []string) bool { return len(ips) == want })
	return err
}

// createService makes a Service selecting group g's pods and waits until
// HNS balances its cluster IP to them; it returns that IP.
func (m *measure) createService(name string, g int) (string, error) {
	svc, err := m.admin.CoreV1().Services(namespace).Create(m.ctx, groupService(name, g), metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	_, err = m.view.waitFor(m.ctx, []string{svc.Spec.ClusterIP}, applyWait, func(ips []string) bool { return len(ips) == m.l.podsPerGroup })
	return svc.Spec.ClusterIP, err
}

// deleteService deletes the Service and waits until HNS has no load
// balancer on vip. Its slice stays: only the garbage collector, which
// this control plane does not run, deletes it, and hnsproxy ignores a
// slice without its Service.
func (m *measure) deleteService(name, vip string) error {
	if err := m.admin.CoreV1().Services(namespace).Delete(m.ctx, name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	return framework.Poll(m.ctx, applyWait, pollInterval, func(ctx context.Context) error {
		ips, exists, err := m.view.backends(ctx, vip)
		if err != nil {
			return err
		}
		if exists {
			return fmt.Errorf("HNS still balances %s to %v", vip, ips)
		}
		return nil
	})
}

// runMix runs the mix phase at the CPU phase's latency per hcn RPC and
// fills the report.
func (m *measure) runMix(node *framework.Node, o options, r *report) error {
	before, err := scrapeProxy(node.Proxy.MetricsURL())
	if err != nil {
		return err
	}
	if err := o.allocsProfile(m.ctx, node, "mix-start", false); err != nil {
		return err
	}
	if err := setLatency(m.ctx, node, o.cpuRPCLatency); err != nil {
		return err
	}
	profile := o.cpuProfile(m.ctx, node, "mix", mixProfileSeconds)
	mix, discarded, err := m.mixPhase(node, o.mixGroups)
	if err != nil {
		return fmt.Errorf("mix phase: %w", err)
	}
	if err := setLatency(m.ctx, node, o.rpcLatency); err != nil {
		return err
	}
	if err := <-profile; err != nil {
		return err
	}
	if err := o.allocsProfile(m.ctx, node, "mix-end", false); err != nil {
		return err
	}
	after, err := scrapeProxy(node.Proxy.MetricsURL())
	if err != nil {
		return err
	}
	r.Mix, r.MixDiscarded = mix, discarded
	r.MixCollections = after.collections - before.collections
	r.MixCollectorCPUMs = (after.gcCPUSeconds - before.gcCPUSeconds) * 1000
	changes := 0
	for _, k := range mix {
		changes += k.Changes
	}
	if changes > 0 {
		r.MixAllocKiBPerChange = (after.allocBytes - before.allocBytes) / float64(changes) / 1024
	}
	for _, kind := range []string{mixScaleUp, mixScaleDown, mixServiceCreate, mixServiceDelete} {
		k := mix[kind]
		logf("mix phase, %s: %d changes, %.1f objects written a change, CPU per object p50 %.3fms p99 %.3fms max %.3fms; p99 %.3fms apart from the %d changes a collection ran in (%.3fms per HNS write)",
			kind, k.Changes, k.ObjectsPerChange, k.PerObjectP50Ms, k.PerObjectP99Ms, k.PerObjectMaxMs,
			k.PerObjectP99ApartFromCollectionsMs, len(k.ChangesWithCollections), k.PerHNSWriteP99ApartFromCollectionsMs)
	}
	logf("mix phase: %d changes not priced (a drift repair), %.0f collections (%.0f ms)", discarded, r.MixCollections, r.MixCollectorCPUMs)
	return nil
}
