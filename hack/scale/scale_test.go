package main

import (
	"context"
	"testing"
	"time"
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

func TestNewLocalPodChangeStopsWhenTheSubnetIsFull(t *testing.T) {
	spec := smallSpec()
	spec.PodsPerNode = 252
	c := newCluster(spec)
	for k := range 2 {
		want := addrPlus(podCIDR(thisNode).Addr(), 253+k).String()
		if _, ip, ok := c.newLocalPodChange(); !ok || ip != want {
			t.Fatalf("new pod %d: ok=%v ip=%q, want %s", k, ok, ip, want)
		}
	}
	if _, _, ok := c.newLocalPodChange(); ok {
		t.Fatal("a 255th pod in a /24 was accepted")
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i))
	}
	for q, want := range map[float64]time.Duration{50: 50, 99: 99, 100: 100, 0: 1} {
		if got := percentile(ds, q); got != want {
			t.Errorf("p%v = %d, want %d", q, got, want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("percentile of nothing is not 0")
	}
}

func TestParseFlagsRejectsBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"-services", "0"},
		{"-nodes", "0"},
		{"-pods-per-node", "255"},
		{"-endpoints-per-service", "50", "-nodes", "2", "-pods-per-node", "10"},
		{"-changes", "-1"},
		{"-hns-latency", "-1ms"},
		{"-cpuprofile-phase", "warm"},
		{"extra"},
	} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("parseFlags(%q) accepted bad input", args)
		}
	}
}

// A small run end to end: HNS ends as the model says after every phase,
// with the minimal writes, and a restart writes nothing.
func TestRunSmallClusterHasNoProblems(t *testing.T) {
	o, err := parseFlags([]string{"-services", "40", "-endpoints-per-service", "5", "-nodes", "4", "-pods-per-node", "12",
		"-changes", "30", "-new-local-pods", "3", "-quiet", "50ms"})
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
	if rep.ColdHNSWrites != rep.LoadBalancers+rep.RemoteEndpoints || rep.LoadBalancers != 40 {
		t.Errorf("cold start: %d writes for %d load balancers and %d remote endpoints", rep.ColdHNSWrites, rep.LoadBalancers, rep.RemoteEndpoints)
	}
	if rep.IncrChanges != 30 || rep.IncrMaxLBWritesPerChange != 1 || rep.NewPodChanges != 3 {
		t.Errorf("changes: %d measured, at most %d load balancer writes each, %d new pods", rep.IncrChanges, rep.IncrMaxLBWritesPerChange, rep.NewPodChanges)
	}
	if rep.RestartHNSWrites != 0 {
		t.Errorf("restart made %d writes", rep.RestartHNSWrites)
	}
}
