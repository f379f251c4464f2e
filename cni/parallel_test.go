package cni_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestParallelPodsOnOneNetwork drives one network as containerd does on a
// busy node: ADDs, DELs and CHECKs of different pods at once, in separate
// plugin processes (the CNI spec lets a runtime run operations of
// different containers in parallel), a DEL of a pod whose ADD never ran,
// and a second DEL of a pod already removed. Afterwards every live pod has
// exactly one endpoint, attached to its namespace, on the address its
// result names and host-local holds; nothing else is left, in HNS or in
// host-local's store.
func TestParallelPodsOnOneNetwork(t *testing.T) {
	n1, conf := l2bridgeNode(t, 11)
	rt := newRuntime(t, conf)
	const wave = 8
	mkPods := func(prefix string) []pod {
		var ps []pod
		for i := range wave {
			ps = append(ps, pod{id: fmt.Sprintf("%s%d", prefix, i), netns: n1.createNamespace(t)})
		}
		return ps
	}
	first, second := mkPods("first"), mkPods("second")
	addresses := map[string]string{} // pod → address in its ADD result
	var mu sync.Mutex
	add := func(p pod) error {
		res, err := rt.cni.AddNetworkList(context.Background(), rt.list, p.rt())
		if err != nil {
			return fmt.Errorf("ADD %s: %w", p.id, err)
		}
		cur, err := current.NewResultFromResult(res)
		if err != nil || len(cur.IPs) != 1 {
			return fmt.Errorf("ADD %s: result %v (%v)", p.id, res, err)
		}
		mu.Lock()
		defer mu.Unlock()
		addresses[p.id] = cur.IPs[0].Address.IP.String()
		return nil
	}
	del := func(p pod) error { return rt.cni.DelNetworkList(context.Background(), rt.list, p.rt()) }
	parallel(t, mapOps(first, add)...)

	// The second wave: the first half of the first pods leave, new pods
	// come, the others are checked, and a pod whose ADD never ran is
	// deleted (containerd tears down a sandbox whose setup failed early).
	ops := mapOps(first[:wave/2], del)
	ops = append(ops, mapOps(second, add)...)
	ops = append(ops, mapOps(first[wave/2:], rt.check)...)
	ops = append(ops, func() error { return del(pod{id: "never-added", netns: n1.createNamespace(t)}) })
	parallel(t, ops...)
	// DEL may come twice.
	parallel(t, mapOps(first[:wave/2], del)...)

	live := append(slices.Clone(first[wave/2:]), second...)
	s := n1.dump(t)
	var want, got []string
	for _, p := range live {
		want = append(want, p.endpointName("cbr0"))
		e := endpointByName(s, p.endpointName("cbr0"))
		if e == nil {
			t.Errorf("pod %s has no endpoint", p.id)
			continue
		}
		if e.IP() != addresses[p.id] {
			t.Errorf("pod %s: endpoint address %s, ADD result %s", p.id, e.IP(), addresses[p.id])
		}
		if ns := namespaceByID(s, p.netns); !strings.EqualFold(e.HostComputeNamespace, p.netns) || ns == nil ||
			!slices.ContainsFunc(namespaceEndpoints(t, ns), func(id string) bool { return strings.EqualFold(id, e.ID) }) {
			t.Errorf("pod %s: endpoint %s not attached to its namespace %s", p.id, e.ID, p.netns)
		}
		got = append(got, addresses[p.id])
	}
	slices.Sort(want)
	if names := names(s); !slices.Equal(names, want) {
		t.Errorf("endpoints %v; want %v", names, want)
	}
	held := allocated(t, conf.dataDir)
	slices.Sort(held)
	slices.Sort(got)
	if !slices.Equal(held, got) || len(slices.Compact(slices.Clone(got))) != len(live) {
		t.Errorf("host-local holds %v; the live pods' results name %v (one address each)", held, got)
	}

	// All leave at once: nothing stays.
	parallel(t, mapOps(live, del)...)
	if s := n1.dump(t); slices.ContainsFunc(s.Endpoints, func(e hnslb.Endpoint) bool { return !e.IsRemote() }) {
		t.Errorf("endpoints left: %v", names(s))
	}
	if held := allocated(t, conf.dataDir); len(held) != 0 {
		t.Errorf("addresses left: %v", held)
	}
}

// mapOps is one operation per pod.
func mapOps(ps []pod, f func(pod) error) []func() error {
	var ops []func() error
	for _, p := range ps {
		ops = append(ops, func() error { return f(p) })
	}
	return ops
}

// parallel runs ops at once and reports each failure.
func parallel(t *testing.T, ops ...func() error) {
	t.Helper()
	errs := make(chan error, len(ops))
	for _, op := range ops {
		go func() { errs <- op() }()
	}
	for range ops {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
