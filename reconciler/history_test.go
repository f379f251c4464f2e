package reconciler

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2/textlogger"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/historytest"
)

// Random histories: the fault soak's question asked in-process, where a
// seed costs milliseconds instead of minutes. A seed picks an HNS build,
// the echoes HNS answers with, the codes it answers a missing object or a
// taken address with (sim.ErrorVariants), whether hnsproxy makes an overlay
// source VIP endpoint, and a history of Service changes,
// HNS faults (failed, lost, kept and half-done writes), HNS restarts that
// may drop objects, the network replaced, pods replaced, objects removed
// behind hnsproxy's back, repairs, hnsproxy killed between any two of
// its steps and started again, hangs and power losses
// (history_hang_test.go). Then the faults stop, and HNS must hold
// exactly what is desired, the other agent's objects untouched, the state
// file naming exactly hnsproxy's objects, and nothing left to write.

// historySeeds is how many seeds `go test` runs; FuzzHistory tries more.
const historySeeds = 100

func TestRandomHistoriesConverge(t *testing.T) {
	for seed := range uint64(historySeeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runHistory(t, seed) })
	}
}

func FuzzHistory(f *testing.F) {
	for seed := range uint64(4) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { runHistory(t, seed) })
}

// history is one run: the node, the desired load balancers, the running
// reconciler and what another agent owns.
type history struct {
	e       *env
	rng     *rand.Rand
	ipv6    bool
	overlay bool // hnsproxy makes a source VIP endpoint, as on an overlay network
	want    map[intent.LBKey]intent.LB
	r       *Reconciler
	kill    *killSwitch
	faults  sim.Faults
	foreign struct{ lb, ep string }
	log     []string // what happened, for the failure message
	// synced is, per state file, the length an fsync made durable: the
	// node's, whichever process wrote it (killFS).
	synced map[string]int64
	// hangSteps is how many steps the hang in h.faults lasts; killAtHeld:
	// hnsproxy dies at the next call HNS holds (history_hang_test.go).
	hangSteps  int
	killAtHeld bool
	// processes are the deadlines of every hnsproxy started, whose
	// abandoned calls report to returns.
	processes []*deadlines
	returns   chan struct{}
}

// The pools a history draws from: pods of this node, pods of two other
// nodes, and frontends of every origin.
var (
	historyPods    = []string{"10.244.1.10", "10.244.1.11", "10.244.1.12", "10.244.1.13"}
	historyPods6   = []string{"fd00:10:244:1::10", "fd00:10:244:1::11"}
	historyRemotes = []intent.Backend{
		rem("10.244.2.20", "192.168.0.2"), rem("10.244.2.21", "192.168.0.2"),
		rem("10.244.3.30", "192.168.0.3"), rem("10.244.3.31", "192.168.0.3"),
	}
	historyRemotes6 = []intent.Backend{rem("fd00:10:244:2::20", "192.168.0.2"), rem("fd00:10:244:3::30", "192.168.0.3")}
	historyProfiles = []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025, sim.ProfileWS2025Mod4}
)

func runHistory(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x4157))
	profile := historyProfiles[rng.IntN(len(historyProfiles))]
	echo, echoes := historytest.RandomEcho(rng)
	variants := historytest.RandomErrorVariants(rng)
	e := newEnvSim(t, profile, sim.Options{Seed: int64(seed) + 1, Variants: variants})
	e.hns.SetEcho(echo)
	e.tweak = func(o *Options) { o.NetworkName = "cbr0" } // read to notice the network replaced
	h := &history{e: e, rng: rng, ipv6: e.profile.Features().IPv6DualStack, overlay: rng.IntN(2) == 0, want: map[intent.LBKey]intent.LB{}, synced: map[string]int64{}}
	h.note("profile %s, echoes %q, error variants %+v, source VIP endpoint %v", profile, echoes, variants, h.overlay)
	for _, ip := range historyPods {
		e.local(ip)
	}
	if h.ipv6 {
		for _, ip := range historyPods6 {
			e.localOutsideNamespace(ip)
		}
	}
	h.plantForeign()
	h.restart()
	defer func() {
		if t.Failed() {
			t.Logf("seed %d history:\n  %s", seed, strings.Join(h.log, "\n  "))
		}
	}()
	for range 30 + rng.IntN(30) {
		h.step()
	}
	h.settle()
	h.check()
	h.restartBesideTenants()
}

func (h *history) note(format string, args ...any) {
	h.log = append(h.log, fmt.Sprintf(format, args...))
}

// quietly runs fn as another actor (the CNI, another agent, an operator)
// whose calls HNS's injected faults do not reach, once a hang is over.
func (h *history) quietly(fn func()) {
	h.endHang()
	h.e.hns.SetFaults(sim.Faults{})
	fn()
	h.e.hns.SetFaults(h.faults)
}

// plantForeign makes what another agent owns: a remote endpoint without
// hnsproxy's name and a load balancer over it, each planted again when an
// HNS restart or a network replacement dropped it (a load balancer that
// lost its endpoint so stays the agent's, without backends).
func (h *history) plantForeign() {
	h.quietly(func() {
		if _, err := h.e.hns.GetEndpointByID(ctx, h.foreign.ep); h.foreign.ep == "" || err != nil {
			doc := buildRemoteEndpoint(h.e.netID, intent.RemoteEndpoint{IP: "10.244.9.9"})
			doc.Name = ""
			ep, err := h.e.hns.CreateEndpoint(ctx, h.e.netID, doc)
			if err != nil {
				h.e.t.Fatal(err)
			}
			h.foreign.ep = strings.ToLower(ep.ID) // as HNS lists it, whatever the echo
		}
		if h.foreign.lb == "" || !h.e.hasLB(h.foreign.lb) {
			l, err := h.e.hns.CreateLoadBalancer(ctx, BuildLB(&intent.LB{
				Key: intent.LBKey{Family: intent.IPv4, VIP: "10.96.9.9", Protocol: hnslb.ProtocolTCP, Port: 9}, InternalPort: 9,
			}, []string{h.foreign.ep}))
			if err != nil {
				h.e.t.Fatal(err)
			}
			h.foreign.lb = strings.ToLower(l.ID)
		}
	})
}

// restart starts a new hnsproxy on what the last one left: the desired
// state handed over, Start retried while HNS fails it. Its HNS writes and
// state file steps go through a kill switch a later step may arm.
func (h *history) restart() {
	h.kill = &killSwitch{}
	opts := h.e.options()
	opts.Logger = textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(io.Discard)))
	h.r = New(&killClient{Client: h.e.hns, k: h.kill}, opts)
	h.r.store.fs = &killFS{k: h.kill, synced: h.synced, noDiskSync: true}
	h.watchReturns(h.r)
	handOver(h.r, slices.Collect(maps.Values(h.want)), h.extras())
	for i := 0; h.start() != nil; i++ {
		if h.kill.dead() {
			h.note("killed while starting: restart")
			h.restart()
			return
		}
		if i == 20 {
			h.note("start kept failing: faults off")
			h.endHang()
			h.faults = sim.Faults{}
			h.e.hns.SetFaults(h.faults)
		}
		h.e.clock.Step(time.Second)
	}
}

func (h *history) start() (err error) {
	h.call(func() { err = h.r.Start(ctx) })
	return err
}

// step is one random event.
func (h *history) step() {
	h.tickHang()
	if h.kill.dead() {
		h.note("restart after the kill")
		h.restart()
		return
	}
	switch n := h.rng.IntN(100); {
	case n < 28:
		h.change()
	case n < 51:
		h.sync()
	case n < 58:
		h.setFaults()
	case n < 63:
		if next, ok := h.r.NextRetry(); ok {
			h.e.clock.Step(max(next.Sub(h.e.clock.Now()), 0))
		}
		h.sync()
	case n < 68:
		h.repair()
	case n < 72:
		h.drift()
	case n < 76:
		h.replacePod()
	case n < 79:
		loss := sim.RestartLosses[h.rng.IntN(len(sim.RestartLosses))]
		h.note("HNS restart losing %q", loss)
		h.restartHNS(loss)
	case n < 81:
		h.replaceNetwork()
	case n < 87:
		h.hang()
	case n < 89:
		h.powerLoss()
	case n < 94:
		h.kill.mu.Lock()
		h.kill.killAt = h.kill.steps + 1 + h.rng.IntN(6)
		h.kill.mu.Unlock()
		h.note("kill armed at step %d", h.kill.killAt)
	default:
		h.note("restart")
		h.restart()
	}
}

// historySourceVIP is the overlay source VIP hnsproxy makes an endpoint for.
const historySourceVIP = "10.244.1.2"

// extras are the endpoints the desired state wants besides the load
// balancers' remote backends: the source VIP's on an overlay node.
func (h *history) extras() []intent.RemoteEndpoint {
	if !h.overlay {
		return nil
	}
	return []intent.RemoteEndpoint{{IP: historySourceVIP, MAC: "00-15-5D-00-00-02", Local: true}}
}

func (h *history) sync() {
	var res SyncResult
	h.call(func() { res = h.r.Sync(ctx) })
	h.note("sync: failed %d pending %d listing %v foreign held %v", res.Failed, res.Pending, res.ListingWanted, res.ForeignHeld)
	if res.NetworkChanged != nil {
		h.exitForNetwork(res.NetworkChanged)
		return
	}
	if res.ListingWanted {
		h.call(func() { _ = h.r.Lookup(ctx) })
	}
}

func (h *history) repair() {
	var err error
	h.call(func() { err = h.r.Repair(ctx) })
	h.note("repair: %v", err)
	var changed *NetworkChangedError
	if errors.As(err, &changed) {
		h.exitForNetwork(changed)
	}
}

// exitForNetwork is the daemon exiting for its network gone or replaced,
// and started again on the network of that name.
func (h *history) exitForNetwork(changed *NetworkChangedError) {
	h.note("exit: %v", changed)
	h.restart()
}

// replaceNetwork deletes the network with its endpoints and makes one of
// its name again, as a CNI that recreates it does (the daemon notices at
// its next Sync or repair); the CNI wires the pods again on it, and the
// other agent makes its endpoint again.
func (h *history) replaceNetwork() {
	h.quietly(func() { h.e.netID = h.e.replaceNetwork(true) })
	h.note("network replaced: now %s", h.e.netID)
	h.rewirePods()
	h.plantForeign()
}

// change upserts a random load balancer or deletes a desired one.
func (h *history) change() {
	if len(h.want) > 0 && h.rng.IntN(4) == 0 {
		keys := slices.SortedFunc(maps.Keys(h.want), func(a, b intent.LBKey) int { return strings.Compare(a.String(), b.String()) })
		k := keys[h.rng.IntN(len(keys))]
		delete(h.want, k)
		h.r.Delete(k)
		handOver(h.r, nil, h.extras())
		h.note("delete %s", k)
		return
	}
	d := h.randomLB()
	h.want[d.Key] = d
	handOver(h.r, []intent.LB{d}, h.extras())
	h.note("upsert %s sticky=%v backends %v", d.Key, d.Distribution == hnslb.DistributionSourceIP, ipsOf(d.Backends))
}

// randomLB is a load balancer on a frontend of a random origin (a cluster
// IP, a node port, a tenant's external IP), in either family where the
// build has IPv6, with one to four backends and, where the build has it,
// maybe session affinity.
func (h *history) randomLB() intent.LB {
	ipv6 := h.ipv6 && h.rng.IntN(4) == 0
	port := []uint16{80, 443}[h.rng.IntN(2)]
	var d intent.LB
	pods, remotes := historyPods, historyRemotes
	if ipv6 {
		pods, remotes = historyPods6, historyRemotes6
	}
	var candidates []intent.Backend
	for _, ip := range pods {
		candidates = append(candidates, loc(ip))
	}
	candidates = append(candidates, remotes...)
	h.rng.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	backends := slices.Clone(candidates[:1+h.rng.IntN(min(4, len(candidates)))])
	switch h.rng.IntN(3) {
	case 0:
		d = lb(fmt.Sprintf("10.96.0.%d", 1+h.rng.IntN(4)), port, backends...)
		if ipv6 {
			d.Key.VIP = fmt.Sprintf("fd00:96::%d", 1+h.rng.IntN(2))
		}
	case 1:
		d = lb("", 30000+port, backends...)
		d.Origin = intent.OriginNodePort
	default:
		d = externalLB(fmt.Sprintf("203.0.113.%d", 5+h.rng.IntN(2)), port, backends...)
		if ipv6 {
			d.Key.VIP = fmt.Sprintf("2001:db8::%d", 5+h.rng.IntN(2))
		}
		d.PortFlags = hnslb.PortMappingFlagsVipExternalIP
	}
	if ipv6 {
		d.Key.Family, d.SourceVIP = intent.IPv6, "fd00:10:244:1::2"
	}
	if h.rng.IntN(3) == 0 {
		d.Key.Protocol = hnslb.ProtocolUDP
	}
	if h.e.profile.Features().SessionAffinity && h.rng.IntN(3) == 0 {
		d.Distribution = hnslb.DistributionSourceIP
	}
	return d
}

// setFaults turns HNS's faults on with random rates, or off.
func (h *history) setFaults() {
	hang, reply := h.faults.Hang, h.faults.HangReply
	if h.rng.IntN(3) == 0 {
		h.faults = sim.Faults{}
	} else {
		h.faults = historytest.RandomFaults(h.rng, 0.4)
	}
	h.faults.Hang, h.faults.HangReply = hang, reply // a hang lasts its steps
	h.e.hns.SetFaults(h.faults)
	h.note("faults %+v", h.faults)
}

// drift removes one of hnsproxy's load balancers behind its back.
func (h *history) drift() {
	var ours []string
	for _, l := range h.e.snapshot().LoadBalancers {
		if l.ID != h.foreign.lb {
			ours = append(ours, l.ID)
		}
	}
	if len(ours) == 0 {
		return
	}
	id := ours[h.rng.IntN(len(ours))]
	h.note("drift: load balancer %s removed out of band", id)
	if err := h.e.hns.DeleteLoadBalancerOutOfBand(id); err != nil {
		h.e.t.Fatal(err)
	}
}

// replacePod deletes a pod's endpoint and wires a new one with its IP, as
// the CNI does when a pod is replaced by one that gets the same address.
func (h *history) replacePod() {
	pods := historyPods
	if h.ipv6 && h.rng.IntN(3) == 0 {
		pods = historyPods6
	}
	ip := pods[h.rng.IntN(len(pods))]
	h.note("pod %s replaced", ip)
	h.quietly(func() {
		for _, ep := range h.e.snapshot().Endpoints {
			if !ep.IsRemote() && ep.IP() == ip {
				if err := h.e.hns.DeleteEndpoint(ctx, ep.ID); err != nil {
					h.e.t.Fatal(err)
				}
			}
		}
		h.wire(ip)
	})
}

// rewirePods wires every pod again after an HNS restart dropped their
// endpoints.
func (h *history) rewirePods() {
	h.quietly(func() {
		for _, ip := range historyPods {
			h.wire(ip)
		}
		if h.ipv6 {
			for _, ip := range historyPods6 {
				h.wire(ip)
			}
		}
	})
}

func (h *history) wire(ip string) {
	if strings.Contains(ip, ":") {
		h.e.localOutsideNamespace(ip)
	} else {
		h.e.local(ip)
	}
}

// settle stops the faults and lets the last hnsproxy (started again if it
// was killed) converge, then repair once the window for late creates is
// over, and converge again.
func (h *history) settle() {
	h.endHang()
	h.faults = sim.Faults{}
	h.e.hns.SetFaults(h.faults)
	h.note("faults off")
	if !h.kill.alive() || h.kill.killAt > 0 || h.r.opts.NetworkID != h.e.netID {
		h.restart()
	}
	h.e.converge(h.r)
	// The periodic repair after the window in which a create abandoned by
	// a killed process may still land (carried.go): it ends the carrying.
	h.e.clock.Step(10 * time.Minute)
	if err := h.r.Repair(ctx); err != nil {
		h.e.t.Fatalf("repair without faults: %v", err)
	}
	h.e.converge(h.r)
}

// check: HNS holds exactly the desired load balancers and remote endpoints
// besides the other agent's, which are untouched; the state file names
// exactly hnsproxy's; a sync and a repair find nothing to do.
func (h *history) check() {
	t := h.e.t
	t.Helper()
	snap := h.e.snapshot()
	got := map[string][]string{}
	remote := map[string]bool{}
	for _, l := range snap.LoadBalancers {
		if l.ID == h.foreign.lb {
			continue
		}
		k, ok := KeyOf(&l)
		if !ok {
			t.Errorf("HNS holds load balancer %s hnsproxy cannot key", l.ID)
			continue
		}
		if _, dup := got[k.String()]; dup {
			t.Errorf("HNS holds two load balancers on %s", k)
		}
		got[k.String()] = h.e.backendIPs(&l)
	}
	wantRemote := map[string]bool{}
	for _, d := range h.want {
		if b, ok := got[d.Key.String()]; !ok {
			t.Errorf("no load balancer for %s", d.Key)
		} else if !slices.Equal(b, ipsOf(d.Backends)) {
			t.Errorf("%s backends %v, want %v", d.Key, b, ipsOf(d.Backends))
		}
		delete(got, d.Key.String())
		for _, b := range d.Backends {
			if !b.Local {
				wantRemote[b.IP] = true
			}
		}
	}
	for k := range got {
		t.Errorf("HNS holds load balancer %s, which nobody wants", k)
	}
	for _, ep := range snap.Endpoints {
		if ep.IsRemote() && ep.ID != h.foreign.ep {
			remote[ep.IP()] = true
		}
	}
	if !maps.Equal(remote, wantRemote) {
		t.Errorf("remote endpoints %v, want %v", slices.Sorted(maps.Keys(remote)), slices.Sorted(maps.Keys(wantRemote)))
	}
	if !h.e.hasLB(h.foreign.lb) {
		t.Error("the other agent's load balancer is gone")
	}
	if _, err := h.e.hns.GetEndpointByID(ctx, h.foreign.ep); err != nil {
		t.Errorf("the other agent's remote endpoint is gone: %v", err)
	}
	h.checkStateFile(snap)
	h.e.hns.ResetCounters()
	h.r.Sync(ctx)
	if err := h.r.Repair(ctx); err != nil {
		t.Errorf("repair: %v", err)
	}
	h.r.Sync(ctx)
	if c := h.e.counters(); c.Writes() != 0 {
		t.Errorf("a sync and a repair after convergence wrote: %v", c.Calls)
	}
	// Every create answered and the late creates' window over: the state
	// file declares nothing but the standing declarations of allocated
	// frontends on a build without modify (docs/reliability.md, "Standing
	// declarations"), whatever kills and restarts left in it.
	var declared []intent.LBKey
	for _, k := range readState(t, h.e.stateFile).CreatingLoadBalancers {
		if d, ok := h.want[k]; !ok || !d.Origin.Allocated() || h.e.profile.Features().ModifyLoadBalancer {
			declared = append(declared, k)
		}
	}
	if eps := readState(t, h.e.stateFile).CreatingRemoteEndpoints; len(declared)+len(eps) != 0 {
		t.Errorf("the state file still declares creates on %v and %v", declared, eps)
	}
}

// checkStateFile: the state file names exactly hnsproxy's objects in
// snap: every load balancer and remote endpoint but the other agent's, and
// the source VIP's endpoint on an overlay node.
func (h *history) checkStateFile(snap *hnslb.Snapshot) {
	t := h.e.t
	t.Helper()
	var lbs, eps []string
	for _, l := range snap.LoadBalancers {
		if l.ID != h.foreign.lb {
			lbs = append(lbs, l.ID)
		}
	}
	sourceVIPs := 0
	for _, ep := range snap.Endpoints {
		switch {
		case ep.IsRemote() && ep.ID != h.foreign.ep:
			eps = append(eps, ep.ID)
		case !ep.IsRemote() && ep.IP() == historySourceVIP:
			eps = append(eps, ep.ID)
			sourceVIPs++
		}
	}
	if want := map[bool]int{true: 1}[h.overlay]; sourceVIPs != want {
		t.Errorf("HNS holds %d source VIP endpoints, want %d", sourceVIPs, want)
	}
	h.e.assertStateFileOwns(lbs, eps)
}

// restartBesideTenants plants another agent's load balancer on every
// tenant frontend of the pools nobody desires, as a tenant's other proxy
// may once hnsproxy let go of it, then restarts hnsproxy on what it left
// and converges: none of them may be taken, whatever declarations the
// history left in the state file.
func (h *history) restartBesideTenants() {
	t := h.e.t
	t.Helper()
	planted := map[string]intent.LBKey{}
	for _, vip := range []string{"203.0.113.5", "203.0.113.6", "2001:db8::5", "2001:db8::6"} {
		if strings.Contains(vip, ":") && !h.ipv6 {
			continue
		}
		for _, port := range []uint16{80, 443} {
			for _, proto := range []uint32{hnslb.ProtocolTCP, hnslb.ProtocolUDP} {
				d := externalLB(vip, port)
				d.Key.Protocol = proto
				backend := h.foreign.ep
				if strings.Contains(vip, ":") {
					d.Key.Family, d.SourceVIP = intent.IPv6, "fd00:10:244:1::2"
					backend = h.podEndpoint(historyPods6[0])
				}
				if _, desired := h.want[d.Key]; desired {
					continue
				}
				l, err := h.e.hns.CreateLoadBalancer(ctx, BuildLB(&d, []string{backend}))
				if err != nil {
					t.Fatalf("planting another agent's load balancer on %s: %v", d.Key, err)
				}
				planted[strings.ToLower(l.ID)] = d.Key
			}
		}
	}
	declared := readState(t, h.e.stateFile).CreatingLoadBalancers
	h.restart()
	h.e.converge(h.r)
	if err := h.r.Repair(ctx); err != nil {
		t.Fatalf("repair: %v", err)
	}
	h.e.converge(h.r)
	for id, k := range planted {
		if !h.e.hasLB(id) {
			t.Errorf("the restart took another agent's load balancer %s on the tenant frontend %s (the state file declared %v)", id, k, declared)
		}
	}
}

// podEndpoint is the ID of the pod's endpoint the CNI made.
func (h *history) podEndpoint(ip string) string {
	for _, ep := range h.e.snapshot().Endpoints {
		if !ep.IsRemote() && ep.IP() == ip {
			return ep.ID
		}
	}
	h.e.t.Fatalf("no endpoint for pod %s", ip)
	return ""
}
