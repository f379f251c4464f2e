package cni_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/internal/hostlocalstore"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/historytest"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// Random pod histories: the reconciler's random histories asked of hnscni.
// A seed picks an HNS build, its echoes, the node's network (l2bridge or
// overlay), the faults HNS has (failed calls, applied or not, deletes
// reported done and kept, listings that answer objects twice or leave them
// out, gets that leave them out) and a history of what a runtime does,
// through libcni, as containerd does it: ADD, and after a failed ADD one
// DEL and the pod's namespace removed whatever that DEL answered (the
// sandbox is forgotten); DEL of a running pod, tried again while it fails;
// an ADD or a DEL killed at a random moment, as a runtime whose call timed
// out kills the plugin; an ADD killed while HNS holds its create or attach,
// which HNS applies after the DEL;
// two or three pods' ADDs and DELs at once;
// CHECK and STATUS; GC with the attachments the runtime still has; a
// runtime that loses a running pod without a DEL; and HNS's service
// restarted, dropping what a random variant drops. host-local hands out six
// addresses, so a released one comes back soon, to a pod whose create HNS
// may refuse while a leftover endpoint holds it.
//
// After every step, with the faults off, the node must hold each running
// pod's endpoint, once, with the address its ADD returned, attached to its
// namespace (none where a restart dropped it), and that address reserved
// for it in host-local's store;
// nothing of a pod whose DEL succeeded; and after a GC that succeeded, no
// reservation but of the attachments the runtime listed, no endpoint of a
// pod the runtime lost while wired, and, where no listing left objects
// out, no endpoint of hnscni's but theirs. Then the faults stop: the DELs
// that failed succeed, pods fill every free address (leftovers holding
// some), GC succeeds, pods fill what it freed, each passes CHECK but
// those whose endpoint a restart dropped, and once all are deleted neither
// HNS nor host-local holds anything of them.

// podHistorySeeds is how many seeds `go test` runs; FuzzPodHistory tries
// more.
const (
	podHistorySeeds = 6
	podHistorySteps = 30
	// The addresses host-local hands out, and the most pods running at once.
	podHistoryAddresses  = 6
	podHistoryMaxRunning = 4
)

func TestRandomPodHistories(t *testing.T) {
	for seed := range uint64(podHistorySeeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runPodHistory(t, seed) })
	}
}

func FuzzPodHistory(f *testing.F) {
	f.Add(uint64(0))
	f.Fuzz(func(t *testing.T, seed uint64) { runPodHistory(t, seed) })
}

// podState is where a pod of a history is, as the runtime knows it.
type podState int

const (
	podAdding      podState = iota // its ADD runs
	podRunning                     // ADD succeeded
	podTerminating                 // a DEL failed; the runtime tries again
	podLost                        // the runtime forgot it without a DEL: GC's to collect
	podDeleted                     // a DEL succeeded, or a GC collected it
)

type historyPod struct {
	pod
	runtime *runtime // its own cache: a lost pod is not in the cache GC runs with
	ip      string   // the address its ADD returned
	state   podState
	// wired is whether its ADD succeeded: a lost pod that was wired holds
	// an address reservation until collected.
	wired bool
	// mayLinger is whether an endpoint of it may still be in HNS after
	// it was deleted: a failed ADD's leftover no listing has shown GC yet.
	mayLinger bool
	// mayHoldAddress is whether an address may still be reserved for it
	// after it was deleted: a killed command's IPAM plugin reserved it
	// after the DEL (killing), until a GC collects it.
	mayHoldAddress bool
	// endpointLost is whether an HNS restart dropped its endpoint while it
	// ran: the runtime does not know, CHECK must say so, DEL must clean up.
	endpointLost bool
}

type podHistory struct {
	t        *testing.T
	ctx      context.Context
	rng      *rand.Rand
	node     *simNode
	conf     netConf
	faults   remote.FaultsRequest
	leaveOut bool // the faults leave objects out of listings
	pods     []*historyPod
	log      []string
}

func runPodHistory(t *testing.T, seed uint64) {
	h := newPodHistory(t, seed)
	for range podHistorySteps {
		h.step()
		h.observe()
	}
	h.settle()
}

func newPodHistory(t *testing.T, seed uint64) *podHistory {
	rng := rand.New(rand.NewPCG(seed, 0x70d))
	profiles := sim.Profiles()
	profile := profiles[rng.IntN(len(profiles))].Name
	_, echo := historytest.RandomEcho(rng)
	overlay := rng.IntN(2) == 0
	network, subnet, first := "cbr0", "10.244.83.0/24", "10.244.83.10"
	mode, networkType := "l2bridge", "l2bridge"
	if overlay {
		network, subnet, first = "vxlan0", "10.244.0.0/23", "10.244.0.10"
		mode, networkType = "overlay", "overlay"
	}
	node := startNode(t, "n1", "--node-ip", "192.168.83.1", "--network-name", network, "--network-type", networkType,
		"--subnet", subnet, "--profile", profile, "--echo", strings.Join(echo, ","), "--seed", fmt.Sprint(seed%1_000_000+1))
	conf := netConf{version: "1.1.0", mode: mode, network: network, subnet: subnet, socket: node.socket, dataDir: t.TempDir()}
	conf.extra = map[string]any{"ipam": map[string]any{"type": "host-local", "dataDir": conf.dataDir,
		"ranges": [][]map[string]string{{{"subnet": subnet, "rangeStart": first, "rangeEnd": ipAt(first, podHistoryAddresses-1)}}}}}

	h := &podHistory{t: t, ctx: context.Background(), rng: rng, node: node, conf: conf}
	h.faults = h.randomFaults()
	h.leaveOut = h.faults.LeftOutOfListings > 0
	h.logf("seed %d: %s network on %s, echo %v, faults %+v", seed, mode, profile, echo, h.faults)
	return h
}

// randomFaults draws HNS's faults for the history (historytest's draws,
// as the wire carries them: any code of StateFreeCodes on any call).
func (h *podHistory) randomFaults() remote.FaultsRequest {
	f := historytest.RandomFaults(h.rng, 0.25)
	var codes []hnslb.ErrorCode
	for _, c := range historytest.StateFreeCodes() {
		if h.rng.IntN(2) == 0 {
			codes = append(codes, c)
		}
	}
	return remote.FaultsRequest{
		ErrorRate: map[string]float64{string(sim.AnyOp): f.ErrorRate[sim.AnyOp]}, Errors: codes,
		Committed: f.Committed, KeptOnDelete: f.KeptOnDelete,
		ListedTwice: f.ListedTwice, LeftOutOfListings: f.LeftOutOfListings, LeftOutInARow: f.LeftOutInARow,
		GetsLeaveOut: f.GetsLeaveOut,
	}
}

// ipAt is the address i after first.
func ipAt(first string, i int) string {
	a := netip.MustParseAddr(first)
	for range i {
		a = a.Next()
	}
	return a.String()
}

func (h *podHistory) logf(format string, args ...any) {
	h.log = append(h.log, fmt.Sprintf(format, args...))
}

// fatalf fails the history with what happened in it.
func (h *podHistory) fatalf(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf("%s\nhistory:\n  %s", fmt.Sprintf(format, args...), strings.Join(h.log, "\n  "))
}

// faulty runs f with the history's faults on.
func (h *podHistory) faulty(f func() error) error {
	h.setFaults(h.faults)
	defer h.setFaults(remote.FaultsRequest{})
	return f()
}

func (h *podHistory) setFaults(f remote.FaultsRequest) {
	h.t.Helper()
	if err := h.node.client.SetFaults(h.ctx, f); err != nil {
		h.fatalf("set faults: %v", err)
	}
}

func (h *podHistory) inState(states ...podState) []*historyPod {
	var out []*historyPod
	for _, p := range h.pods {
		if slices.Contains(states, p.state) {
			out = append(out, p)
		}
	}
	return out
}

func (h *podHistory) pick(states ...podState) *historyPod {
	pods := h.inState(states...)
	if len(pods) == 0 {
		return nil
	}
	return pods[h.rng.IntN(len(pods))]
}

func (h *podHistory) step() {
	switch r := h.rng.IntN(100); {
	case r < 30:
		if len(h.inState(podRunning)) < podHistoryMaxRunning {
			h.add(true)
			return
		}
		fallthrough
	case r < 47:
		if p := h.pick(podRunning); p != nil {
			h.del(p, true)
		}
	case r < 57:
		if p := h.pick(podTerminating); p != nil {
			h.del(p, true)
		}
	case r < 69:
		h.gc(true)
	case r < 77:
		if p := h.pick(podRunning); p != nil {
			err := h.faulty(func() error { return p.runtime.check(p.pod) })
			h.logf("CHECK %s: %v", p.id, err)
		}
	case r < 80:
		rt := h.newRuntime()
		err := h.faulty(func() error { return rt.cni.GetStatusNetworkList(h.ctx, rt.list) })
		h.logf("STATUS: %v", err)
	case r < 84:
		h.restartHNS()
	case r < 93:
		h.together()
	case r < 97:
		if len(h.inState(podRunning)) < podHistoryMaxRunning {
			h.addKilledInAHang()
		}
	default:
		if p := h.pick(podRunning); p != nil {
			p.state = podLost
			h.logf("the runtime loses %s", p.id)
		}
	}
}

func (h *podHistory) newRuntime() *runtime { return newRuntime(h.t, h.conf) }

// restartHNS restarts HNS's service, which drops what a random variant of
// what is not known drops (docs/simulator.md, "Restart"), down for a
// moment or not at all: the calls of the next steps may meet it down.
func (h *podHistory) restartHNS() {
	loss := sim.RestartLosses[h.rng.IntN(len(sim.RestartLosses))]
	down := remote.Duration(time.Duration(1+h.rng.IntN(3)) * 50 * time.Millisecond)
	h.setFaults(remote.FaultsRequest{Restart: down, RestartLoses: string(loss)})
	h.logf("HNS restarts, down %v, losing %q", time.Duration(down), loss)
	if loss != sim.RestartLosesEndpoints {
		return
	}
	for _, p := range h.inState(podRunning, podTerminating) {
		p.endpointLost = true
	}
}

// add runs a new pod's ADD, under the faults if faulty (added).
func (h *podHistory) add(faulty bool) *historyPod {
	p := h.newPod()
	ctx, cancel, killed := h.killing(faulty, p)
	defer cancel()
	// What a killed ADD started may land after it and its DEL: an IPAM
	// plugin hnscni ran outlives it and may reserve an address after the
	// DEL released it, and HNS may apply a call it had received. So its
	// endpoint and address may linger until a GC collects them.
	p.mayLinger, p.mayHoldAddress = killed, killed
	var res types.Result
	err := h.command(faulty, func() (err error) { res, err = p.cniAdd(ctx); return err })
	h.added(p, res, err, faulty)
	return p
}

// killing is the context a pod's command runs under: under the faults,
// one in eight is given up on after 0 to 40 ms (killed), as a runtime
// whose call timed out does, and libcni kills the plugin wherever it got
// to.
func (h *podHistory) killing(faulty bool, p *historyPod) (ctx context.Context, cancel context.CancelFunc, killed bool) {
	if !faulty || h.rng.IntN(8) != 0 {
		return h.ctx, func() {}, false
	}
	after := time.Duration(h.rng.IntN(40)) * time.Millisecond
	h.logf("%s's next command is killed after %v", p.id, after)
	ctx, cancel = context.WithTimeout(h.ctx, after)
	return ctx, cancel, true
}

// addKilledInAHang runs a new pod's ADD, under the faults, while HNS holds
// one of ADD's writes, before or after applying it (hung, as seen on real
// nodes); the runtime gives up on the ADD, and libcni kills the plugin,
// and the ADD's DEL follows. Then HNS lets the call go: a create applied
// after the DEL leaves an endpoint on an address IPAM released, for the
// ADD IPAM hands it to (addressheld.go) or a GC to remove.
func (h *podHistory) addKilledInAHang() {
	op := []string{string(sim.OpCreateEndpoint), string(sim.OpAddNamespaceEndpoint)}[h.rng.IntN(2)]
	hung := h.faults
	afterApply := h.rng.IntN(2) == 0
	if afterApply {
		hung.HangReply = []string{op}
	} else {
		hung.Hang = []string{op}
	}
	p := h.newPod()
	p.mayLinger, p.mayHoldAddress = true, true
	h.setFaults(hung)
	ctx, cancel := context.WithTimeout(h.ctx, 500*time.Millisecond)
	defer cancel()
	_, err := p.cniAdd(ctx)
	derr := p.cniDel(h.ctx)
	h.setFaults(remote.FaultsRequest{}) // the held call goes on
	h.removeNamespace(p)
	p.state = podDeleted
	if derr != nil {
		p.state = podLost
	}
	h.logf("ADD %s with %s hung (after applying: %v), given up on: %v; its DEL: %v", p.id, op, afterApply, err, derr)
}

// command runs a CNI command, under the faults if faulty.
func (h *podHistory) command(faulty bool, f func() error) error {
	if faulty {
		return h.faulty(f)
	}
	return f()
}

// newPod is a pod about to be added, in a namespace of its own.
func (h *podHistory) newPod() *historyPod {
	var ns *hnslb.Namespace
	h.pastRestart("create a namespace", func() (err error) {
		ns, err = h.node.client.CreateNamespace(h.ctx, &hnslb.Namespace{Type: hnslb.NamespaceTypeHost, SchemaVersion: hnslb.V2})
		return err
	})
	p := &historyPod{pod: pod{id: fmt.Sprintf("pod%02d", len(h.pods)), netns: ns.ID}, runtime: h.newRuntime(), state: podAdding}
	h.pods = append(h.pods, p)
	return p
}

func (p *historyPod) cniAdd(ctx context.Context) (types.Result, error) {
	return p.runtime.cni.AddNetworkList(ctx, p.runtime.list, p.rt())
}

func (p *historyPod) cniDel(ctx context.Context) error {
	return p.runtime.cni.DelNetworkList(ctx, p.runtime.list, p.rt())
}

// added takes in what a pod's ADD answered. A failed one is followed by
// its DEL, under the faults if faulty, and its namespace's removal, and
// the pod is lost if that DEL fails too (containerd forgets the sandbox).
func (h *podHistory) added(p *historyPod, res types.Result, err error, faulty bool) {
	if err == nil {
		r, cerr := current.NewResultFromResult(res)
		if cerr != nil || len(r.IPs) != 1 {
			h.fatalf("ADD %s answered %v (%v)", p.id, res, cerr)
		}
		p.ip, p.state, p.wired = r.IPs[0].Address.IP.String(), podRunning, true
		p.mayLinger, p.mayHoldAddress = false, false // killed, if at all, once done
		h.logf("ADD %s: %s", p.id, p.ip)
		return
	}
	if !faulty {
		h.fatalf("ADD %s without faults: %v", p.id, err)
	}
	derr := h.command(faulty, func() error { return p.cniDel(h.ctx) })
	h.removeNamespace(p)
	p.state, p.mayLinger = podDeleted, true
	if derr != nil {
		p.state = podLost
	}
	h.logf("ADD %s: %v; its DEL: %v", p.id, err, derr)
}

// pastRestart runs what the runtime does in HNS itself (a namespace made
// or removed), again while HNS is down after a restart (restartHNS), for a
// minute at most.
func (h *podHistory) pastRestart(what string, f func() error) {
	h.t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			h.fatalf("%s: %v", what, err)
		}
	}
}

func (h *podHistory) removeNamespace(p *historyPod) {
	h.pastRestart("remove "+p.id+"'s namespace", func() error {
		if err := h.node.client.DeleteNamespace(h.ctx, p.netns); !hnslb.IsNotFound(err) {
			return err
		}
		return nil
	})
}

// del runs a pod's DEL, under the faults if faulty (deleted).
func (h *podHistory) del(p *historyPod, faulty bool) {
	ctx, cancel, _ := h.killing(faulty, p)
	defer cancel()
	h.deleted(p, h.command(faulty, func() error { return p.cniDel(ctx) }), faulty)
}

// deleted takes in what a pod's DEL answered: a failed one is tried again
// later.
func (h *podHistory) deleted(p *historyPod, err error, faulty bool) {
	h.logf("DEL %s: %v", p.id, err)
	if err != nil {
		if !faulty {
			h.fatalf("DEL %s without faults: %v", p.id, err)
		}
		p.state = podTerminating
		return
	}
	p.state = podDeleted
	h.removeNamespace(p)
}

// together runs two or three pods' ADDs and DELs at once, under the
// faults, as containerd runs different pods' sandboxes in parallel.
func (h *podHistory) together() {
	type job struct {
		p   *historyPod
		add bool
		res types.Result
		err error
	}
	var jobs []*job
	running := len(h.inState(podRunning))
	deletable := h.inState(podRunning, podTerminating)
	for range 2 + h.rng.IntN(2) {
		if len(deletable) > 0 && (h.rng.IntN(2) == 0 || running >= podHistoryMaxRunning) {
			i := h.rng.IntN(len(deletable))
			jobs = append(jobs, &job{p: deletable[i]})
			deletable = slices.Delete(deletable, i, i+1)
			continue
		}
		if running < podHistoryMaxRunning {
			jobs = append(jobs, &job{p: h.newPod(), add: true})
			running++
		}
	}
	h.logf("together: %d commands", len(jobs))
	h.setFaults(h.faults)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			if j.add {
				j.res, j.err = j.p.cniAdd(h.ctx)
			} else {
				j.err = j.p.cniDel(h.ctx)
			}
		})
	}
	wg.Wait()
	h.setFaults(remote.FaultsRequest{})
	for _, j := range jobs {
		if j.add {
			h.added(j.p, j.res, j.err, true)
		} else {
			h.deleted(j.p, j.err, true)
		}
	}
}

// gc runs GC, under the faults if faulty, with the attachments the runtime
// has, from a cache that holds none (libcni's own DELs of cached
// attachments are not what is tested), and checks what a GC that
// succeeded promises.
func (h *podHistory) gc(faulty bool) {
	valid := []types.GCAttachment{} // [], not null: hnscni refuses a GC without the list
	for _, p := range h.inState(podRunning, podTerminating) {
		valid = append(valid, types.GCAttachment{ContainerID: p.id, IfName: "eth0"})
	}
	rt := h.newRuntime()
	run := func(f func() error) error { return f() }
	if faulty {
		run = h.faulty
	}
	err := run(func() error { return rt.cni.GCNetworkList(h.ctx, rt.list, &libcni.GCArgs{ValidAttachments: valid}) })
	h.logf("GC keeping %v: %v", valid, err)
	if err != nil {
		if !faulty {
			h.fatalf("GC without faults: %v", err)
		}
		return
	}
	listingsWhole := !faulty || !h.leaveOut
	for _, p := range h.pods {
		if p.state == podLost && p.wired || p.state == podDeleted && listingsWhole {
			p.mayLinger = false
		}
		if p.state == podLost || p.state == podDeleted {
			p.mayHoldAddress = false
		}
		if p.state == podLost {
			p.state = podDeleted
		}
	}
	for a, holder := range h.reservations() {
		if !slices.Contains(valid, holder) {
			h.fatalf("after a GC that succeeded, host-local reserves %s for %v, which the runtime did not list", a, holder)
		}
	}
}

func (h *podHistory) reservations() map[string]types.GCAttachment {
	reserved, err := hostlocalstore.Reservations(filepath.Join(h.conf.dataDir, "pods"))
	if err != nil {
		h.fatalf("read host-local's store: %v", err)
	}
	out := map[string]types.GCAttachment{}
	for a, holder := range reserved {
		out[a.String()] = holder
	}
	return out
}

// observe checks, with the faults off, what the node holds of each pod.
func (h *podHistory) observe() {
	h.t.Helper()
	snap, err := h.node.client.Dump(h.ctx)
	if err != nil {
		h.fatalf("dump: %v", err)
	}
	reserved := h.reservations()
	byName := map[string][]*hnslb.Endpoint{}
	for i := range snap.Endpoints {
		ep := &snap.Endpoints[i]
		byName[ep.Name] = append(byName[ep.Name], ep)
	}
	for _, p := range h.pods {
		eps := byName[p.endpointName(h.conf.network)]
		attachment := types.GCAttachment{ContainerID: p.id, IfName: "eth0"}
		switch p.state {
		case podRunning:
			if p.endpointLost {
				if len(eps) != 0 {
					h.fatalf("running pod %s, whose endpoint HNS lost, has %d endpoints", p.id, len(eps))
				}
				if holder := reserved[p.ip]; holder != attachment {
					h.fatalf("running pod %s's address %s is reserved for %v", p.id, p.ip, holder)
				}
				continue
			}
			if len(eps) != 1 {
				h.fatalf("running pod %s has %d endpoints, want one", p.id, len(eps))
			}
			if ip := eps[0].IP(); ip != p.ip {
				h.fatalf("running pod %s's endpoint holds %s, its ADD answered %s", p.id, ip, p.ip)
			}
			if ns := namespaceByID(snap, p.netns); ns == nil || !slices.ContainsFunc(namespaceEndpoints(h.t, ns), func(id string) bool {
				return strings.EqualFold(id, eps[0].ID)
			}) {
				h.fatalf("running pod %s's endpoint %s is not in its namespace %s", p.id, eps[0].ID, p.netns)
			}
			if holder := reserved[p.ip]; holder != attachment {
				h.fatalf("running pod %s's address %s is reserved for %v", p.id, p.ip, holder)
			}
		case podDeleted:
			if len(eps) > 0 && !p.mayLinger {
				h.fatalf("pod %s, deleted, still has endpoint %s", p.id, eps[0].ID)
			}
			for a, holder := range reserved {
				if holder == attachment && !p.mayHoldAddress {
					h.fatalf("pod %s, deleted, still has address %s reserved", p.id, a)
				}
			}
		}
	}
}

// settle stops the faults and brings the node to what the runtime has:
// the failed DELs succeed, pods fill the free addresses (a leftover may
// hold one: ADD removes it), GC collects what the runtime lost, pods fill
// what it freed, every running pod passes CHECK, and once all are
// deleted nothing of them is left.
func (h *podHistory) settle() {
	h.logf("the faults stop")
	h.pastRestart("HNS back after its restart", func() error { _, err := h.node.client.Version(h.ctx); return err })
	for _, p := range h.inState(podTerminating) {
		h.del(p, false)
	}
	h.fill()
	h.gc(false)
	h.observe()
	h.fill()
	for _, p := range h.inState(podRunning) {
		err := p.runtime.check(p.pod)
		h.logf("CHECK %s: %v", p.id, err)
		if (err != nil) != p.endpointLost {
			h.fatalf("CHECK %s without faults: %v; want it to fail only where HNS lost the endpoint", p.id, err)
		}
	}
	for _, p := range h.inState(podRunning) {
		h.del(p, false)
	}
	h.gc(false)
	h.observe()
	snap, err := h.node.client.Dump(h.ctx)
	if err != nil {
		h.fatalf("dump: %v", err)
	}
	for _, ep := range snap.Endpoints {
		if strings.HasPrefix(ep.Name, "pod") {
			h.fatalf("with every pod deleted and collected, HNS holds endpoint %s %q", ep.ID, ep.Name)
		}
	}
	if r := h.reservations(); len(r) > 0 {
		h.fatalf("with every pod deleted and collected, host-local reserves %v", r)
	}
}

// fill adds pods, without faults, for every address host-local has free.
func (h *podHistory) fill() {
	for range podHistoryAddresses - len(h.reservations()) {
		h.add(false)
		h.observe()
	}
}
