//go:build linux && benche2e

package main

import (
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLayoutPlacesEveryPodInItsNodesCIDR(t *testing.T) {
	for _, c := range []struct {
		l     layout
		nodes int
	}{
		{layout{services: 10000, groupSize: 10, podsPerGroup: 10}, 50},
		{layout{services: 10000, groupSize: 10, podsPerGroup: 10, nodes: 5000}, 5000},
		{layout{services: 1000, groupSize: 10, podsPerGroup: 10, nodes: 255}, 255},
		{layout{services: 1000, groupSize: 10, podsPerGroup: 10, nodes: 256}, 256},
	} {
		l := c.l
		if l.pods() != l.services || l.remoteNodes() != c.nodes {
			t.Fatalf("%+v: pods %d, nodes %d; want %d and %d", l, l.pods(), l.remoteNodes(), l.services, c.nodes)
		}
		cluster := netip.MustParsePrefix(l.clusterCIDR())
		seen := map[string]bool{}
		cidrs := map[string]bool{l.podCIDR(0): true}
		for i := range l.remoteNodes() {
			cidr := l.remotePodCIDR(i)
			if cidrs[cidr] || !cluster.Contains(netip.MustParsePrefix(cidr).Addr()) {
				t.Fatalf("%+v: node %d's %s given twice or outside %s", l, i, cidr, cluster)
			}
			cidrs[cidr] = true
		}
		// The mix phase's extra pods too, which follow the loaded ones.
		for n := range l.pods() + l.extraPods() {
			node, ip := l.podPlace(n)
			var k int
			if _, err := fmt.Sscanf(node, "remote-%d", &k); err != nil {
				t.Fatal(err)
			}
			if !netip.MustParsePrefix(l.remotePodCIDR(k)).Contains(netip.MustParseAddr(ip)) {
				t.Fatalf("pod %d: %s outside %s's %s", n, ip, node, l.remotePodCIDR(k))
			}
			if seen[ip] {
				t.Fatalf("pod %d: address %s given twice", n, ip)
			}
			seen[ip] = true
		}
	}
}

func TestQuantileBoundReadsTheDifferenceOfTwoScrapes(t *testing.T) {
	before := buckets{0.5: 10, 1: 10, 2: 10, math.Inf(1): 10}
	after := buckets{0.5: 10, 1: 60, 2: 109, math.Inf(1): 110}
	if b, n := quantileBound(before, after, 0.5); b != 1 || n != 100 {
		t.Errorf("p50: bound %v of %v observations; want 1 of 100", b, n)
	}
	if b, _ := quantileBound(before, after, 0.99); b != 2 {
		t.Errorf("p99: bound %v; want 2", b)
	}
	if b, _ := quantileBound(before, after, 1); !math.IsInf(b, 1) {
		t.Errorf("max: bound %v; want +Inf", b)
	}
	if _, n := quantileBound(after, after, 0.5); n != 0 {
		t.Errorf("no observations between equal scrapes: got %v", n)
	}
}

func TestQuantileNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if got := quantile(d, 0.5); got != 0.050 {
		t.Errorf("p50 %v; want 0.050", got)
	}
	if got := quantile(d, 0.99); got != 0.099 {
		t.Errorf("p99 %v; want 0.099", got)
	}
	if got := quantile(d, 1); got != 0.100 {
		t.Errorf("max %v; want 0.100", got)
	}
}

func TestChangeOverlapsARepair(t *testing.T) {
	idle, listing := repairMark{started: 3}, repairMark{started: 4, repairing: true}
	ended := repairMark{started: 4}
	for _, c := range []struct {
		name          string
		before, after repairMark
		want          bool
	}{
		{"no repair", idle, idle, false},
		{"a repair started during it", idle, listing, true},
		{"a repair started and ended during it", idle, ended, true},
		{"made while one ran", listing, ended, true},
		{"after one ended", ended, ended, false},
	} {
		if got := overlapped(c.before, c.after); got != c.want {
			t.Errorf("%s: overlapped %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSamplesSplitOnlyWhereTheSlicesWereSeen(t *testing.T) {
	var s samples
	s.add(timing{total: 300 * time.Millisecond, slices: 200 * time.Millisecond})
	s.add(timing{total: 500 * time.Millisecond})
	if len(s.total) != 2 || len(s.slices) != 1 || s.proxy[0] != 100*time.Millisecond {
		t.Errorf("samples %+v: want 2 totals, one split of 200 ms + 100 ms", s)
	}
}

// Options that make no sense are refused with the flag's name.
func TestOptionsRefuseNonsense(t *testing.T) {
	valid := func() options {
		return options{layout: layout{services: 1000, groupSize: 10}, endpoints: 10000, mode: "l2bridge", cpuPods: 100, profile: "ws2025"}
	}
	if o := valid(); o.validate() != nil {
		t.Fatalf("valid options refused: %v", o.validate())
	}
	for flag, spoil := range map[string]func(*options){
		"-cpu-pods":        func(o *options) { o.cpuPods = -1 },
		"-cpu-rpc-latency": func(o *options) { o.cpuRPCLatency = -time.Millisecond },
		"-mode":            func(o *options) { o.mode = "nat" },
		"-endpoints":       func(o *options) { o.endpoints = 10001 },
		"-profile":         func(o *options) { o.profile = "ws2016" },
		"-nodes":           func(o *options) { o.nodes = 4 }, // 250 pods a node
		"-mix-groups":      func(o *options) { o.mixGroups = -1 },
		"-min-sync-period": func(o *options) { o.minSyncPeriod = -time.Second },
	} {
		o := valid()
		spoil(&o)
		if err := o.validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("with %s spoiled: %v, want an error naming it", flag, err)
		}
	}
}

// The mix phase's 40 extra pods count towards a node's 245.
func TestOptionsCountTheMixPhasesPods(t *testing.T) {
	o := options{layout: layout{services: 1200, groupSize: 10, nodes: 5}, endpoints: 12000, mode: "l2bridge", profile: "ws2025"}
	if err := o.validate(); err != nil { // 240 pods a node
		t.Fatalf("without a mix phase: %v", err)
	}
	o.mixGroups = 10
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "248 pods a node") {
		t.Errorf("with one: %v, want 248 pods a node refused", err)
	}
	o.mixGroups = 121
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "-mix-groups") {
		t.Errorf("more groups than there are: %v", err)
	}
}

func TestMixFiguresArePerObjectWritten(t *testing.T) {
	var samples []mixSample
	for i := 1; i <= 100; i++ {
		// i ms over 2 objects and 4 HNS writes, the last one a single
		// object's 200 ms and one write.
		samples = append(samples, mixSample{cpu: time.Duration(i) * time.Millisecond, objects: 2, hnsWrites: 4, at: time.Duration(i) * time.Second})
	}
	samples[99] = mixSample{cpu: 200 * time.Millisecond, objects: 1, hnsWrites: 1, collection: true, at: 100 * time.Second}
	samples[98].collection = true
	samples[50].hnsWrites = 1 // 51 ms for one HNS write
	samples[0].hnsWrites = 0  // no HNS write: not in the per-write p99
	got := figuresOf(samples)
	// Apart from the last two (collections), the dearest is 98 ms over 2
	// objects, and 51 ms for one HNS write.
	want := mixKind{Changes: 100, ObjectsPerChange: 1.99, PerObjectP50Ms: 25, PerObjectP99Ms: 49.5, PerObjectMaxMs: 200,
		ChangesWithCollections: []int{98, 99}, PerObjectP99ApartFromCollectionsMs: 49, PerHNSWriteP99ApartFromCollectionsMs: 51}
	if math.Abs(got.ObjectsPerChange-want.ObjectsPerChange) > 1e-9 {
		t.Errorf("objects a change %v, want %v", got.ObjectsPerChange, want.ObjectsPerChange)
	}
	got.ObjectsPerChange = want.ObjectsPerChange
	if len(got.CPUPerChangeMs) != 100 || got.CPUPerChangeMs[0] != 1 || got.CPUPerChangeMs[99] != 200 ||
		len(got.ObjectsWritten) != 100 || got.ObjectsWritten[0] != 2 || got.ObjectsWritten[99] != 1 {
		t.Errorf("series %v %v, want each change's CPU and objects in order", got.CPUPerChangeMs, got.ObjectsWritten)
	}
	if len(got.StartSeconds) != 100 || got.StartSeconds[0] != 1 || got.StartSeconds[99] != 100 {
		t.Errorf("starts %v, want each change's, in seconds, in order", got.StartSeconds)
	}
	if len(got.HNSWritten) != 100 || got.HNSWritten[0] != 0 || got.HNSWritten[1] != 4 || got.HNSWritten[50] != 1 {
		t.Errorf("HNS writes %v, want each change's in order", got.HNSWritten)
	}
	got.CPUPerChangeMs, got.ObjectsWritten, got.StartSeconds, got.HNSWritten = nil, nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("figures %+v, want %+v", got, want)
	}
	if none := figuresOf(nil); !reflect.DeepEqual(none, mixKind{}) {
		t.Errorf("no samples: %+v", none)
	}
}

func TestGroupIsItsServicesAndTheirVIPs(t *testing.T) {
	l := layout{services: 30, groupSize: 10, podsPerGroup: 10}
	vips := make([]string, l.services)
	for i := range vips {
		vips[i] = fmt.Sprintf("10.96.0.%d", i)
	}
	names, got := l.group(1, vips)
	if len(names) != 10 || names[0] != "s-10" || names[9] != "s-19" || len(got) != 10 || got[0] != "10.96.0.10" || got[9] != "10.96.0.19" {
		t.Errorf("group 1: %v %v, want s-10..s-19 and their VIPs", names, got)
	}
	if svc := groupService("x", 2); svc.Spec.Selector[groupLabel] != "g-2" || svc.Spec.Ports[0].Port != servicePort {
		t.Errorf("groupService: %+v", svc.Spec)
	}
}
