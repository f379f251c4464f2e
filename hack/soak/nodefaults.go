//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// Settings of the node-level faults the red team found (issue F3, F5, F6).
const (
	stateDirSize      = "2m"            // the tmpfs holding each node's state file (a journal grows to ~300 KiB before it is folded)
	stateFullFor      = 2 * time.Second // full before and after the kill
	addressLossFor    = 3 * time.Second
	floodConns        = 300 // idle connections to healthz per flood
	floodHold         = 3 * time.Second
	healthAfterFlood  = 15 * time.Second // a fresh client's /healthz must answer within this
	massDeletionShare = 2                // a loss that leaves fewer than 1/2 of the load balancers is a mass deletion
	settleFor         = 30 * time.Second // a hang (15 s), an HNS restart and the catch-up after them
	hangFor           = 15 * time.Second // longer than hnsproxy's 10 s HNS call deadline
)

// hungOps are the HNS calls a hang holds: the load-balancer writes, so the
// reconciler's deadlines, abandoned calls and liveness are all exercised.
var hungOps = []string{"CreateLoadBalancer", "DeleteLoadBalancer", "UpdateLoadBalancer"}

// faultsOf is the node's fault setting: faultsOn plus the hang in force.
func (c *chaos) faultsOf(n *framework.Node, restart time.Duration) remote.FaultsRequest {
	f := faultsOn(restart)
	i := slices.Index(c.cluster.Nodes, n)
	f.PartialHoldsFrontend, f.GetsLeaveOut = partialHolds(c.seed, i), getsLeaveOut(c.seed, i)
	c.hangsMu.Lock()
	f.Hang = c.hangs[n.Name()]
	c.hangsMu.Unlock()
	return f
}

// restartFaults are the node's faults with an HNS restart that drops
// what loss names.
func (c *chaos) restartFaults(n *framework.Node, loss sim.RestartLoss) remote.FaultsRequest {
	f := c.faultsOf(n, hnsRestartWindow)
	f.RestartLoses = string(loss)
	return f
}

// replantForeign waits out an HNS restart that dropped objects and makes
// the other agent's again, as that agent would once HNS answers
// (plantOtherAgent); the node's foreign set follows.
func (c *chaos) replantForeign(ctx context.Context, n *framework.Node) {
	// Locked before the poll's time starts: a network replacement holding
	// plantMu does not use up the agent's settleFor.
	c.plantMu.Lock()
	defer c.plantMu.Unlock()
	err := framework.Poll(ctx, settleFor, 200*time.Millisecond, func(ctx context.Context) error {
		have := c.foreignOf(n.Name())
		now, err := plantOtherAgent(ctx, n, have)
		if err != nil {
			return err
		}
		c.foreignMu.Lock()
		c.foreign[n.Name()] = now
		c.foreignMu.Unlock()
		return nil
	})
	if err != nil {
		c.report(fmt.Errorf("node %s: the other agent's objects after an HNS restart: %w", n.Name(), err))
	}
}

// foreignOf is the node's foreign set now.
func (c *chaos) foreignOf(node string) foreignSet {
	c.foreignMu.Lock()
	defer c.foreignMu.Unlock()
	return c.foreign[node]
}

// hangHNS holds the node's load-balancer writes for hangFor (HNS hung, as
// seen on real nodes), checking every second that /livez stays 200: a hung
// HNS is not a dead hnsproxy. Then it lifts the hang.
func (c *chaos) hangHNS(ctx context.Context, n *framework.Node) {
	setHang := func(ops []string) error {
		c.hangsMu.Lock()
		c.hangs[n.Name()] = ops
		c.hangsMu.Unlock()
		return n.Sim.SetFaults(ctx, c.faultsOf(n, 0))
	}
	if err := setHang(hungOps); err != nil {
		c.report(fmt.Errorf("node %s: hanging HNS: %w", n.Name(), err))
		return
	}
	c.hnsHangs.Add(1)
	c.drv.burst(ctx, 10)
	livez := strings.Replace(n.Proxy.HealthzURL(), "/healthz", "/livez", 1)
	client := &http.Client{Timeout: 2 * time.Second}
	for end := time.Now().Add(hangFor); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(time.Second) {
		if n.Proxy.PID() == 0 {
			continue // killed by the soak: restarted by keepProxies
		}
		resp, err := client.Get(livez)
		if err != nil {
			continue // a restart under way
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			c.livezFailures.Add(1)
			fmt.Fprintf(os.Stderr, "soak: node %s: /livez %d while HNS hangs\n", n.Name(), resp.StatusCode)
		}
	}
	c.callTimeouts.Add(scrapeSum(client, n.Proxy.MetricsURL(), "hnsproxy_hns_call_timeouts_total"))
	if err := setHang(nil); err != nil {
		c.report(fmt.Errorf("node %s: lifting the HNS hang: %w", n.Name(), err))
	}
}

// scrapeSum adds up a counter's series on a Prometheus text page (0 when
// the page cannot be read: the proxy may be restarting).
func scrapeSum(client *http.Client, url, name string) int64 {
	resp, err := client.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var sum float64
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		if f := strings.Fields(line); len(f) >= 2 {
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				sum += v
			}
		}
	}
	return int64(sum)
}

// fillerName is the file that fills a state directory (fillStateDir).
const fillerName = "filler"

// stateDirs mounts a size-limited tmpfs on each node's state directory
// (framework.ClusterSpec.PrepareStateDir), so the soak can fill it as a
// full disk would. Without the privilege to mount it says so loudly and
// the soak runs without state directory faults.
type stateDirs struct {
	mounted []string
	refused error
}

func (s *stateDirs) prepare(node, dir string) error {
	if s.refused != nil {
		return nil
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+stateDirSize+",mode=0700"); err != nil {
		s.refused = err
		fmt.Fprintf(os.Stderr, "soak: WARNING: cannot mount a %s tmpfs on %s (%v): the state directory faults (a full disk) DO NOT RUN in this soak\n", stateDirSize, dir, err)
		return nil
	}
	s.mounted = append(s.mounted, dir)
	return nil
}

// keep copies each mounted state directory's files (the state file and
// its journal; not the filler) to a directory beside it named with
// ".kept", since unmounting drops them.
func (s *stateDirs) keep() {
	for _, dir := range s.mounted {
		entries, err := os.ReadDir(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "soak: keeping %s: %v\n", dir, err)
			continue
		}
		kept := dir + ".kept"
		if err := os.MkdirAll(kept, 0o700); err != nil {
			fmt.Fprintf(os.Stderr, "soak: keeping %s: %v\n", dir, err)
			continue
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || e.Name() == fillerName {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err == nil {
				err = os.WriteFile(filepath.Join(kept, e.Name()), data, 0o600)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "soak: keeping %s: %v\n", e.Name(), err)
			}
		}
	}
}

func (s *stateDirs) unmount() error {
	var errs []error
	for _, dir := range s.mounted {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

// fillStateDir fills the node's state directory (a full disk), makes
// changes so that hnsproxy's state writes fail, kills hnsproxy and starts
// it again while the disk is still full, then frees the space.
func (c *chaos) fillStateDir(ctx context.Context, n *framework.Node) {
	filler := filepath.Join(n.StateDir(), fillerName)
	f, err := os.Create(filler)
	if err != nil {
		c.report(fmt.Errorf("node %s: filling the state directory: %w", n.Name(), err))
		return
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			break // ENOSPC: full
		}
	}
	f.Close()
	c.drv.burst(ctx, 10)
	time.Sleep(stateFullFor)
	if err := n.Proxy.Kill(); err != nil {
		c.report(err)
	} else {
		c.kills.Add(1)
	}
	c.start(ctx, n)
	time.Sleep(stateFullFor)
	if err := os.Remove(filler); err != nil {
		c.report(fmt.Errorf("node %s: freeing the state directory: %w", n.Name(), err))
		return
	}
	c.stateDirFaults.Add(1)
}

// loseNodeAddresses empties the Node's status.addresses for a while (a
// Node re-registered before its addresses are filled) and watches that
// hnsproxy does not empty the node's HNS meanwhile. The driver pauses and
// the node's HNS is given time to converge on the API objects first (a
// hang or an HNS restart can hold a backlog that no write shows). Then
// only the load balancers that hold a wanted frontend as it is wanted are
// watched, by ID: catching up, hnsproxy deletes what nothing wants and
// replaces what differs (a delete, then a create, where HNS cannot modify),
// and neither is a mass deletion.
func (c *chaos) loseNodeAddresses(ctx context.Context, n *framework.Node) {
	c.drv.mu.Lock()
	defer c.drv.mu.Unlock()
	exp, err := c.settle(ctx, n)
	if err != nil {
		c.report(fmt.Errorf("node %s: what its HNS must hold: %w", n.Name(), err))
		return
	}
	nodes := c.cluster.Admin.CoreV1().Nodes()
	var saved []corev1.NodeAddress
	err = framework.Poll(ctx, 30*time.Second, 200*time.Millisecond, func(ctx context.Context) error {
		node, err := nodes.Get(ctx, n.Name(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		saved = node.Status.Addresses
		node.Status.Addresses = nil
		_, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		c.report(fmt.Errorf("node %s: removing its addresses: %w", n.Name(), err))
		return
	}
	c.addressLosses.Add(1)
	var watched map[string]bool
	var lossy int64 // HNS restarts that dropped objects, when watched was taken
	for end := time.Now().Add(addressLossFor); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		snap, err := n.Sim.Dump(ctx)
		if err != nil {
			continue // an HNS restart window
		}
		if watched == nil {
			watched, lossy = heldAsWanted(snap, exp), c.lossyRestarts.Load()
			continue
		}
		if c.lossyRestarts.Load() != lossy {
			break // HNS dropped them, not hnsproxy
		}
		if left := stillHeld(snap, watched); len(watched) >= 4 && left < len(watched)/massDeletionShare {
			c.massDeletions.Add(1)
			fmt.Fprintf(os.Stderr, "soak: node %s: %d of %d load balancers held as wanted are left while its Node has no address\n", n.Name(), left, len(watched))
			break
		}
	}
	err = framework.Poll(ctx, time.Minute, 200*time.Millisecond, func(ctx context.Context) error {
		node, err := nodes.Get(ctx, n.Name(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		node.Status.Addresses = saved
		_, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		c.report(fmt.Errorf("node %s: restoring its addresses: %w", n.Name(), err))
	}
}

// settle waits, up to settleFor, until the node's HNS holds every object
// the API objects want as they want it, and returns that expectation;
// past the bound it returns the latest one (the watch then sees fewer
// load balancers, not false losses). It fails only if no expectation
// could be computed at all (the apiserver down throughout).
func (c *chaos) settle(ctx context.Context, n *framework.Node) (exp expectation, err error) {
	computed := false
	for end := time.Now().Add(settleFor); ; time.Sleep(200 * time.Millisecond) {
		e, lerr := expectedState(ctx, c.cluster.Admin, c.settings[n.Name()])
		if lerr == nil {
			exp, computed = e, true
			if snap, derr := n.Sim.Dump(ctx); derr == nil {
				if d := compare(snap, exp, c.foreignOf(n.Name())); len(d.Missing)+len(d.Wrong) == 0 {
					return exp, nil
				}
			}
		}
		err = lerr
		if ctx.Err() != nil || !time.Now().Before(end) {
			break
		}
	}
	if computed {
		return exp, nil
	}
	return exp, errors.Join(err, ctx.Err())
}

// heldAsWanted are the IDs of the load balancers in snap that hold a
// frontend the expectation wants, as it wants it.
func heldAsWanted(snap *hnslb.Snapshot, exp expectation) map[string]bool {
	eps := endpointsByID(snap)
	held := map[string]bool{}
	for i := range snap.LoadBalancers {
		lb := &snap.LoadBalancers[i]
		key, ok := keyOf(lb)
		if !ok {
			continue
		}
		if w, wanted := exp.state.LBs[key]; wanted && lbMismatch(lb, w, eps) == "" {
			held[lb.ID] = true
		}
	}
	return held
}

// stillHeld counts the load balancers of ids that snap still holds.
func stillHeld(snap *hnslb.Snapshot, ids map[string]bool) int {
	left := 0
	for i := range snap.LoadBalancers {
		if ids[snap.LoadBalancers[i].ID] {
			left++
		}
	}
	return left
}

// floodHealthz holds many idle connections to the node's healthz port,
// then checks that a fresh client still gets /healthz answered.
func (c *chaos) floodHealthz(ctx context.Context, n *framework.Node) {
	addr := fmt.Sprintf("127.0.0.1:%d", n.Proxy.HealthzPort)
	var conns []net.Conn
	for range floodConns {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break // the backlog is full: the flood has done its worst
		}
		conns = append(conns, conn)
	}
	time.Sleep(floodHold)
	for _, conn := range conns {
		conn.Close()
	}
	c.floods.Add(1)
	client := &http.Client{Timeout: 2 * time.Second}
	err := framework.Poll(ctx, healthAfterFlood, 250*time.Millisecond, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.Proxy.HealthzURL(), nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("healthz %d", resp.StatusCode)
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		c.healthFailures.Add(1)
		fmt.Fprintf(os.Stderr, "soak: node %s: /healthz after an idle-connection flood (%d connections): %v\n", n.Name(), len(conns), err)
	}
}
