//go:build linux

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// Fault settings of the soak.
const (
	hnsErrorRate       = 0.10
	hnsCommitted       = 0.2  // of failed writes, the share HNS applied anyway (a lost reply)
	hnsKeptOnDelete    = 0.05 // of deletes HNS reports done, the share whose object it keeps (microsoft/Windows-Containers#631)
	hnsPartialCreates  = 0.5  // of failed load balancer creates, the share that leaves one without port mappings (kubernetes/kubernetes#141488)
	hnsListedTwice     = 0.05 // of the objects a listing answers, the share answered twice (no capture: sim.Faults.ListedTwice)
	hnsLeftOut         = 0.05 // of the objects HNS holds, the share a listing leaves out (no capture: sim.Faults.LeftOutOfListings)
	hnsLeftOutInARow   = 2    // the most looks in a row (listings, and gets where they leave out too: getsLeaveOut) that leave out one object: three is what hnsproxy takes for gone (hnslb.SilentLooks), so a loss below it is a bug, not chance
	hnsRestartWindow   = 3 * time.Second
	hnsLatency         = 500 * time.Microsecond // per hcn RPC: a create or update 1.5 to 2 ms, a sync of a burst tens of ms, as on Windows
	hnsRestartsEach    = 3                      // per node
	apiRestarts        = 2
	killsEach          = 2               // per node
	killWait           = 5 * time.Second // for a burst's writes to begin before a kill
	stateDirFaultsEach = 1               // per node, where the state directory could be mounted
	watchEvery         = 200 * time.Millisecond
)

// injectedCodes are the failures HNS calls draw from: unreachable, timed
// out, and the HNS manager stopped (all transient).
var injectedCodes = []hnslb.ErrorCode{hnslb.CodeRPCServerUnavailable, hnslb.CodeTimeout, hnslb.CodeManagerStopped}

// injectedResults are those codes as hnssim's counters name them.
var injectedResults = []string{"RPCServerUnavailable", "Timeout", "ManagerStopped"}

// restartLoss is what node i's k-th HNS restart drops: the seed turns
// the variants (docs/simulator.md, "What a restart drops") over the
// restarts. Not the containers' endpoints: hnsproxy cannot make those
// again, and no CNI here would.
func restartLoss(seed uint64, i, k int) sim.RestartLoss {
	losses := []sim.RestartLoss{sim.RestartKeepsAll, sim.RestartLosesLoadBalancers, sim.RestartLosesRemoteEndpoints}
	return losses[(seed+uint64(i)+uint64(k))%uint64(len(losses))]
}

// errorVariants are the codes node i's HNS answers where real HNS's code
// is not known (docs/simulator.md, "Unknown codes"): a missing backend, a
// missing load balancer, an endpoint address another endpoint holds, an
// endpoint create on a network that is gone, and a listing of one. The
// seed turns each over the nodes, so the two nodes of a run answer
// differently.
func errorVariants(seed uint64, i int) sim.ErrorVariants {
	pick := func(codes []hnslb.ErrorCode) hnslb.ErrorCode { return codes[(seed+uint64(i))%uint64(len(codes))] }
	return sim.ErrorVariants{
		MissingBackend:      pick(sim.MissingBackendCodes()),
		MissingLoadBalancer: pick(sim.MissingLoadBalancerCodes()),
		AddressTaken:        pick(sim.AddressTakenCodes()),
		MissingNetwork:      pick(sim.MissingNetworkCodes()),
		// 0: the listing of a network gone is empty.
		MissingNetworkListing: pick(append([]hnslb.ErrorCode{0}, sim.MissingNetworkCodes()...)),
	}
}

// networkReplacedOn is the node whose network the run replaces: turned by
// the seed so that, over four seeds, each node's and each of the
// missing-network codes (errorVariants) meet the replacement.
func networkReplacedOn(seed uint64, nodes int) int { return int(seed/2) % nodes }

// variantArgs are hnssim serve's flags for v.
func variantArgs(v sim.ErrorVariants) []string {
	hex := func(c hnslb.ErrorCode) string { return fmt.Sprintf("0x%x", uint32(c)) }
	return []string{"--missing-backend-code", hex(v.MissingBackend), "--missing-lb-code", hex(v.MissingLoadBalancer),
		"--address-taken-code", hex(v.AddressTaken), "--missing-network-code", hex(v.MissingNetwork),
		"--missing-network-listing-code", hex(v.MissingNetworkListing)}
}

func faultsOn(restart time.Duration) remote.FaultsRequest {
	latency := remote.Duration(hnsLatency)
	return remote.FaultsRequest{
		Latency:   &latency,
		ErrorRate: map[string]float64{"*": hnsErrorRate},
		Errors:    injectedCodes,
		Committed: hnsCommitted,
		Restart:   remote.Duration(restart),

		KeptOnDelete:      hnsKeptOnDelete,
		PartialCreates:    hnsPartialCreates,
		ListedTwice:       hnsListedTwice,
		LeftOutOfListings: hnsLeftOut,
		LeftOutInARow:     hnsLeftOutInARow,
	}
}

// echoArgs are node i's hnssim flags for how its HNS answers (sim.Echo,
// not known of real HNS): every liberty at once on one node, none on the
// other, turned by the seed so that over four seeds each node meets both
// with its partial load balancers holding their frontend and not
// (partialHolds).
func echoArgs(seed uint64, i int) []string {
	if (seed/2+uint64(i))%2 == 1 {
		return []string{"--echo=all"}
	}
	return nil
}

// partialHolds is whether node i's partial load balancers hold their
// frontend (sim.Faults.PartialHoldsFrontend, not known of real HNS): the
// seed turns it over the nodes, so the two nodes of a run differ.
func partialHolds(seed uint64, i int) bool { return (seed+uint64(i))%2 == 0 }

// getsLeaveOut is whether node i's gets by ID and by name leave objects
// out as its listings do (sim.Faults.GetsLeaveOut: hcn's gets are
// filtered listings; not known of real HNS): one node's do, the other's
// not, turned by the seed so that over eight seeds each node meets it
// with every echo and partial holding.
func getsLeaveOut(seed uint64, i int) bool { return (seed/4+uint64(i))%2 == 1 }

// chaos runs the faults of the soak's fault window and keeps every
// hnsproxy running until told to stop, counting what happened.
type chaos struct {
	cluster  *framework.Cluster
	settings map[string]nodeSettings // each node's, for what its HNS must hold
	foreign  map[string]foreignSet   // each node's objects others own; foreignMu guards it while faults run
	drv      *driver
	seed     uint64

	hnsRestarts atomic.Int64
	// lossyRestarts counts the HNS restarts that dropped objects
	// (restartLoss); the other agent makes its own again after each.
	lossyRestarts atomic.Int64
	foreignMu     sync.Mutex
	// plantMu orders what rewrites a node's foreign set from what HNS holds
	// (replantForeign, replaceNetwork): each reads the set and writes it
	// anew, so one running beside another would undo its change.
	plantMu     sync.Mutex
	apiRestarts atomic.Int64
	kills       atomic.Int64
	midSync     atomic.Int64 // kills that landed after the proxy's writes began
	crashes     atomic.Int64
	maxRSSKiB   atomic.Int64
	errs        chan error

	// stateDirsMounted: the nodes' state directories are size-limited
	// mounts the soak may fill (nodefaults.go).
	stateDirsMounted bool
	// hangs holds, per node, the HNS operations hung now (nodefaults.go);
	// every fault setting of that node keeps them.
	hangsMu        sync.Mutex
	hangs          map[string][]string
	hnsHangs       atomic.Int64
	livezFailures  atomic.Int64
	callTimeouts   atomic.Int64 // hnsproxy_hns_call_timeouts_total at the end of each hang
	stateDirFaults atomic.Int64
	addressLosses  atomic.Int64
	massDeletions  atomic.Int64
	floods         atomic.Int64
	healthFailures atomic.Int64
	// networkReplacements counts the networks replaced (network.go), and
	// networkExits the hnsproxy exits that said so. networkExit holds, per
	// node, whether such an exit is expected now, and killing whether a
	// kill is under way: a kill while the exit is expected would start a
	// process that reads the new network and never exits, so they wait
	// for each other.
	networkReplacements atomic.Int64
	networkExits        atomic.Int64
	networkExitMu       sync.Mutex
	networkExit         map[string]bool
	killing             map[string]bool
}

// at returns the offsets, within window, of n events spread evenly and
// shifted by shift (a share of one gap), so events of different kinds and
// nodes do not coincide.
func at(window time.Duration, n int, shift float64) []time.Duration {
	gap := window / time.Duration(n+1)
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = gap*time.Duration(i+1) + time.Duration(float64(gap)*shift)
	}
	return out
}

// faults runs the HNS faults and apiserver restarts for window, then turns
// the faults off. It returns once everything it started has finished.
func (c *chaos) faults(ctx context.Context, window time.Duration) {
	start := time.Now()
	var wg sync.WaitGroup
	for i, n := range c.cluster.Nodes {
		if err := n.Sim.SetFaults(ctx, c.faultsOf(n, 0)); err != nil {
			c.report(fmt.Errorf("node %s: setting faults: %w", n.Name(), err))
		}
		wg.Go(func() {
			for k, off := range at(window, hnsRestartsEach, 0.3*float64(i)) {
				if !sleepUntil(ctx, start.Add(off)) {
					return
				}
				loss := restartLoss(c.seed, i, k)
				if err := n.Sim.SetFaults(ctx, c.restartFaults(n, loss)); err != nil {
					c.report(fmt.Errorf("node %s: HNS restart: %w", n.Name(), err))
					continue
				}
				c.hnsRestarts.Add(1)
				if loss != sim.RestartKeepsAll {
					c.lossyRestarts.Add(1)
					c.replantForeign(ctx, n)
				}
			}
		})
	}
	for i, n := range c.cluster.Nodes {
		wg.Go(func() {
			if sleepUntil(ctx, start.Add(at(window, 1, 0.6+0.15*float64(i))[0])) {
				c.loseNodeAddresses(ctx, n)
			}
		})
		wg.Go(func() {
			if sleepUntil(ctx, start.Add(at(window, 1, -0.4+0.15*float64(i))[0])) {
				c.floodHealthz(ctx, n)
			}
		})
		wg.Go(func() {
			if sleepUntil(ctx, start.Add(at(window, 1, -0.1+0.1*float64(i))[0])) {
				c.hangHNS(ctx, n)
			}
		})
	}
	wg.Go(func() {
		n := c.cluster.Nodes[networkReplacedOn(c.seed, len(c.cluster.Nodes))]
		if sleepUntil(ctx, start.Add(at(window, 1, 0.3)[0])) {
			c.replaceNetwork(ctx, n)
		}
	})
	wg.Go(func() {
		for _, off := range at(window, apiRestarts, 0.1) {
			if !sleepUntil(ctx, start.Add(off)) {
				return
			}
			if err := c.cluster.CP.RestartAPIServer(ctx); err != nil {
				c.report(fmt.Errorf("restarting the apiserver: %w", err))
				continue
			}
			c.apiRestarts.Add(1)
		}
	})
	sleepUntil(ctx, start.Add(window))
	wg.Wait()
	for _, n := range c.cluster.Nodes {
		var none remote.Duration
		if err := n.Sim.SetFaults(context.Background(), remote.FaultsRequest{Latency: &none}); err != nil {
			c.report(fmt.Errorf("node %s: clearing faults: %w", n.Name(), err))
		}
	}
}

// keepProxies watches every node's hnsproxy until ctx ends: it kills each
// with SIGKILL killsEach times within window (mid-sync: after a burst of
// changes, once the proxy's HNS writes have begun), restarts it, restarts
// it after any exit it did not cause (a crash), and samples peak memory.
func (c *chaos) keepProxies(ctx context.Context, window time.Duration) {
	start := time.Now()
	var wg sync.WaitGroup
	for i, n := range c.cluster.Nodes {
		rng := rand.New(rand.NewPCG(c.seed, uint64(i)))
		// The first kill comes before the node's HNS hang (at 45 to 50 %
		// of the window), so each node is killed mid-sync once even when
		// the second, waiting out the hang, runs into the window's end.
		kills := at(window, killsEach, -0.5+0.2*float64(i))
		var fills []time.Duration
		if c.stateDirsMounted {
			fills = at(window, stateDirFaultsEach, -0.3+0.2*float64(i))
		}
		wg.Go(func() {
			tick := time.NewTicker(watchEvery)
			defer tick.Stop()
			for {
				c.sampleRSS(n.Proxy)
				switch {
				case n.Proxy.PID() == 0 && c.exitedForNetwork(n):
					c.networkExits.Add(1)
					fmt.Fprintf(os.Stderr, "soak: hnsproxy %s exited for its replaced network; restarting\n", n.Name())
					c.start(ctx, n)
				case n.Proxy.PID() == 0:
					c.crashes.Add(1)
					fmt.Fprintf(os.Stderr, "soak: hnsproxy %s exited on its own; restarting (log %s)\n", n.Name(), n.Proxy.LogPath())
					c.start(ctx, n)
				case len(kills) > 0 && time.Since(start) >= kills[0] && c.beginKill(n):
					kills = kills[1:]
					c.killMidSync(ctx, n, rng, start.Add(window))
					c.endKill(n)
				case len(fills) > 0 && time.Since(start) >= fills[0]:
					fills = fills[1:]
					c.fillStateDir(ctx, n)
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
	wg.Wait()
}

// killMidSync makes a burst of changes and waits until the node's HNS sees
// the proxy's writes begin (a sync is under way), lets a few more calls
// through, then sends SIGKILL and starts the proxy again. A burst can find
// the proxy unable to write: its HNS hung (hangHNS) or restarting, the
// apiserver down. In a short soak a kill falls in a hang by the schedule
// alone, and every kill of a 45 s run once landed where no write could
// begin. So it makes another burst until writes begin or until passes, and
// kills then regardless (not counted as mid-sync).
func (c *chaos) killMidSync(ctx context.Context, n *framework.Node, rng *rand.Rand, until time.Time) {
	for writing := false; !writing && ctx.Err() == nil; {
		before, err := hnsWrites(ctx, n)
		c.drv.burst(ctx, 10)
		writing = err == nil && writesBegin(ctx, n, before, killWait)
		if writing {
			c.midSync.Add(1)
		} else if !time.Now().Before(until) {
			break
		}
	}
	time.Sleep(time.Duration(rng.IntN(5)) * 4 * hnsLatency) // up to four calls of four RPCs
	c.sampleRSS(n.Proxy)
	if err := n.Proxy.Kill(); err != nil {
		c.report(err)
		return
	}
	c.kills.Add(1)
	c.start(ctx, n)
}

// writesBegin reports whether the node's HNS counts more successful writes
// than before within wait.
func writesBegin(ctx context.Context, n *framework.Node, before int, wait time.Duration) bool {
	for deadline := time.Now().Add(wait); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(time.Millisecond) {
		if w, err := hnsWrites(ctx, n); err == nil && w > before {
			return true
		}
	}
	return false
}

func hnsWrites(ctx context.Context, n *framework.Node) (int, error) {
	st, err := n.Sim.Stats(ctx)
	return st.Writes(), err
}

// start restarts a node's hnsproxy; a failure to get ready is reported but
// the watch goes on (an exit shows up as a crash on the next tick).
func (c *chaos) start(ctx context.Context, n *framework.Node) {
	if err := n.Proxy.Start(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "soak: starting hnsproxy %s: %v\n", n.Name(), err)
	}
}

// sampleRSS records the process's peak resident set (VmHWM).
func (c *chaos) sampleRSS(p *framework.Proxy) {
	pid := p.PID()
	if pid == 0 {
		return
	}
	_, kib, err := framework.ProcessMemory(pid)
	for old := c.maxRSSKiB.Load(); err == nil && kib > old && !c.maxRSSKiB.CompareAndSwap(old, kib); {
		old = c.maxRSSKiB.Load()
	}
}

func (c *chaos) report(err error) {
	select {
	case c.errs <- err:
	default:
	}
	fmt.Fprintln(os.Stderr, "soak:", err)
}

// hnsCounts are what the nodes' HNS counted of the soak's faults.
type hnsCounts struct {
	injected int // calls failed with an injected code, restart windows included
	kept     int // deletes reported done whose object HNS kept
	// addressesRefused are endpoint creates refused for their address (held
	// by another endpoint), under each node's errorVariants.
	addressesRefused int
	// partial are failed load balancer creates that left one without port
	// mappings (hnsPartialCreates).
	partial int
}

// addressRefusedResults are the address-taken codes as hnssim's counters
// name them.
var addressRefusedResults = []string{"AlreadyExists", "ObjectAlreadyExists", "AddrInvalidOrReserved"}

// hnsFaults reads hnsCounts across nodes.
func hnsFaults(ctx context.Context, c *framework.Cluster) (hnsCounts, error) {
	var counts hnsCounts
	for _, n := range c.Nodes {
		st, err := n.Sim.Stats(ctx)
		if err != nil {
			return counts, err
		}
		for _, results := range st.Calls {
			for _, r := range injectedResults {
				counts.injected += results[r]
			}
		}
		for _, r := range addressRefusedResults {
			counts.addressesRefused += st.Calls[sim.OpCreateEndpoint][r]
		}
		counts.kept += st.KeptOnDelete
		counts.partial += st.PartialCreates
	}
	return counts, nil
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(t)):
		return true
	}
}
