package cni_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/historytest"
)

// TestEveryCodeOnEveryCallLeavesThePodWiredOrNothing: whatever code HNS
// answers any one call of ADD or DEL with, applied or not, an ADD that
// succeeds wired the pod (its endpoint, attached, on the address IPAM
// holds), one that fails left neither endpoint nor address; a DEL that
// succeeds left neither, one that fails kept the address while the
// endpoint may hold it (a delete answered "not found" while HNS keeps the
// endpoint fails it: "try again later"), and either answered "try again
// later" only for HNS unavailable or timed out otherwise. Once HNS
// answers, the runtime's DEL clears what is left.
func TestEveryCodeOnEveryCallLeavesThePodWiredOrNothing(t *testing.T) {
	n1, conf := l2bridgeNode(t, 7)
	rt := newRuntime(t, conf)
	reads := []string{"GetNamespace", "GetNetwork", "GetEndpoint", "Version"}
	writes := []string{"CreateEndpoint", "AddNamespaceEndpoint", "RemoveNamespaceEndpoint", "DeleteEndpoint"}
	i := 0
	for _, op := range append(reads, writes...) {
		for _, c := range historytest.AnyCodes() {
			code, notFound := fmt.Sprintf("%#x", uint32(c)), hnslb.IsNotFound(&hnslb.Error{Code: c})
			for _, committed := range []string{"0", "1"} {
				if committed == "1" && slices.Contains(reads, op) {
					continue // a read changes nothing
				}
				if op == "GetEndpoint" && notFound {
					continue // a lookup's "not found" is taken at its word: the endpoint is gone (docs/reliability.md)
				}
				i++
				p := pod{id: fmt.Sprintf("anycode-%d", i), netns: n1.createNamespace(t)}
				t.Run(fmt.Sprintf("%s/%s/committed=%s", op, code, committed), func(t *testing.T) {
					fault := func() {
						n1.hnssim(t, "faults", "--error-rate", op+"=1", "--error-code", code, "--committed", committed)
					}
					fault()
					_, err := rt.cni.AddNetworkList(context.Background(), rt.list, p.rt())
					n1.hnssim(t, "faults")
					if err != nil {
						checkTryAgain(t, "ADD", err, c)
					}
					checkWiredOrNothing(t, n1, conf, p, err == nil, "ADD")
					if err != nil {
						rt.del(t, p) // the runtime's DEL after a failed ADD
						rt.add(t, p)
					}

					fault()
					err = rt.cni.DelNetworkList(context.Background(), rt.list, p.rt())
					n1.hnssim(t, "faults")
					kept := op == "DeleteEndpoint" && committed == "0" && notFound
					if err != nil && !kept {
						checkTryAgain(t, "DEL", err, c)
					}
					if kept && cniCode(err) != int(types.ErrTryAgainLater) {
						t.Errorf("DEL whose endpoint HNS kept after answering its delete %s: %v, want try again later", code, err)
					}
					s := n1.dump(t)
					left, held := endpointByName(s, p.endpointName("cbr0")) != nil, len(allocated(t, conf.dataDir)) > 0
					switch {
					case err == nil && (left || held):
						t.Errorf("DEL succeeded and left the endpoint %v, the address %v", left, held)
					case err != nil && left && !held:
						t.Errorf("DEL failed, its endpoint still there, and released the address it holds")
					}
					rt.del(t, p)
					checkWiredOrNothing(t, n1, conf, p, false, "the DEL after")
				})
			}
		}
	}
}

// checkTryAgain checks that a command failed by HNS answers "try again
// later" exactly when HNS was unavailable or timed out.
func checkTryAgain(t *testing.T, cmd string, err error, code hnslb.ErrorCode) {
	t.Helper()
	transient := hnslb.IsUnavailable(&hnslb.Error{Code: code})
	if got := cniCode(err) == int(types.ErrTryAgainLater); got != transient {
		t.Errorf("%s answered %v; try again later: %v, want %v", cmd, err, got, transient)
	}
}

// checkWiredOrNothing checks that p is wired (its endpoint attached to its
// namespace and one address held) or that nothing of it is left.
func checkWiredOrNothing(t *testing.T, n *simNode, conf netConf, p pod, wired bool, after string) {
	t.Helper()
	s := n.dump(t)
	ep := endpointByName(s, p.endpointName("cbr0"))
	addrs := allocated(t, conf.dataDir)
	if !wired {
		if ep != nil || len(addrs) != 0 {
			t.Errorf("after %s: endpoint %v, addresses %v; want none", after, ep != nil, addrs)
		}
		return
	}
	if ep == nil || len(addrs) != 1 || !slices.Contains(namespaceEndpoints(t, namespaceByID(s, p.netns)), ep.ID) {
		t.Errorf("after %s that succeeded: endpoint %v, addresses %v, want it attached to %s on one address", after, ep, addrs, p.netns)
	}
}

// TestGCKeepsTheAddressOfAnEndpointHNSKept: an endpoint GC deletes that HNS
// still has afterwards (the delete answered with a not-found code, or
// reported done, and the endpoint kept) keeps its address, and GC answers
// "try again later"; the next GC, once HNS lets the endpoint go, releases it.
func TestGCKeepsTheAddressOfAnEndpointHNSKept(t *testing.T) {
	n1, conf := l2bridgeNode(t, 8)
	rt := newRuntime(t, conf)
	gc := func() error {
		return rt.cni.GCNetworkList(context.Background(), rt.list, &libcni.GCArgs{ValidAttachments: []types.GCAttachment{}})
	}
	for _, code := range []string{"0x490", "0x803b0001", "0x803b0002"} {
		t.Run(code, func(t *testing.T) {
			newRuntime(t, conf).add(t, pod{id: "leaked", netns: n1.createNamespace(t)}) // a runtime that has since lost its cache
			n1.hnssim(t, "faults", "--error-rate", "DeleteEndpoint=1", "--error-code", code, "--committed", "0")
			err := gc()
			n1.hnssim(t, "faults")
			if cniCode(err) != int(types.ErrTryAgainLater) {
				t.Errorf("GC whose delete HNS answered %s and kept the endpoint: %v, want try again later", code, err)
			}
			if got := allocated(t, conf.dataDir); len(got) != 1 || len(n1.dump(t).Endpoints) != 1 {
				t.Errorf("addresses %v with the endpoint still there, want its address kept", got)
			}
			if err := gc(); err != nil {
				t.Fatal("GC once HNS deletes:", err)
			}
			if got := allocated(t, conf.dataDir); len(got) != 0 || len(n1.dump(t).Endpoints) != 0 {
				t.Errorf("after the GC that deleted it: addresses %v, endpoints %v", got, names(n1.dump(t)))
			}
		})
	}
}
