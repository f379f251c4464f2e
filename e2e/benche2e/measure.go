//go:build linux && benche2e

package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/sim"
)

// measure times changes and sorts them by whether a drift repair listed
// HNS while they were made.
type measure struct {
	ctx     context.Context
	admin   kubernetes.Interface
	view    *hnsView
	slices  *sliceWatch
	repairs *repairWatch
	l       layout
	vips    []string
	// modifies: HNS updates a load balancer in place (ws2025), so a
	// readiness flip creates none.
	modifies bool
	// normal and repair are the changes made without and during a repair.
	normal, repair samples
	// used counts the pods the repair phase flipped, after the others.
	used int
	// minSyncPeriod is hnsproxy's: the part of the budget it may wait.
	minSyncPeriod time.Duration
}

// samples are changes' latencies: end to end, and, where the bench's
// informer saw every slice of the change, the control plane's share and
// the rest (hnsproxy's).
type samples struct{ total, slices, proxy []time.Duration }

func (s *samples) add(t timing) {
	s.total = append(s.total, t.total)
	if t.slices > 0 {
		s.slices, s.proxy = append(s.slices, t.slices), append(s.proxy, t.total-t.slices)
	}
}

// change flips pod n's readiness and files the timing.
func (m *measure) change(n int, ready bool) error {
	before := m.repairs.mark()
	t, err := change(m.ctx, m.admin, m.view, m.slices, m.l, m.vips, n, ready, applyWait)
	if err != nil {
		return fmt.Errorf("change %d: %w", len(m.normal.total)+len(m.repair.total), err)
	}
	during := overlapped(before, m.repairs.mark())
	if during {
		m.repair.add(t)
	} else {
		m.normal.add(t)
	}
	if share := t.total - t.slices; t.slices > 0 && share > m.minSyncPeriod+slowShare {
		// What set a p99 is found in hnsproxy's log by this time.
		logf("slow change: pod %d ready=%v made at %s (during a repair: %v): %.3fs, hnsproxy's share %.3fs",
			n, ready, t.at.UTC().Format("15:04:05.000"), during, t.total.Seconds(), share.Seconds())
	}
	return nil
}

// slowShare is the budget for hnsproxy's share of a change
// beyond min-sync-period.
const slowShare = 250 * time.Millisecond

// repairPhase makes changes during drift repairs until want of them
// overlapped one: each round deletes one load balancer behind hnsproxy's
// back (of the last Service group, whose pods it leaves alone, so no change
// waits for the repair itself), waits for the next repair to start, and
// flips pods until the repair has put the load balancer back. Pods are
// picked after the first skip ones.
func (m *measure) repairPhase(node *framework.Node, want, skip int, period time.Duration) error {
	deleted := m.vips[len(m.vips)-1]
	lastGroup := m.l.groups() - 1
	back := func(ips []string) bool { return len(ips) == m.l.podsPerGroup }
	for len(m.repair.total) < want {
		before := m.repairs.mark()
		creates, err := loadBalancerCreates(m.ctx, node)
		if err != nil {
			return err
		}
		id, err := m.view.loadBalancerID(m.ctx, deleted)
		if err != nil {
			return err
		}
		if err := node.Sim.Client.DeleteLoadBalancer(m.ctx, id); err != nil {
			return fmt.Errorf("deleting the load balancer of %s out of band: %w", deleted, err)
		}
		if err := m.repairs.waitRepair(m.ctx, before, period+applyWait); err != nil {
			return err
		}
		for len(m.repair.total) < want {
			if repaired, err := m.repaired(node, deleted, creates); err != nil || repaired {
				if err != nil {
					return err
				}
				break
			}
			n := pick(m.l, skip+m.used)
			m.used++
			if n/m.l.podsPerGroup == lastGroup {
				continue
			}
			for _, ready := range []bool{false, true} {
				if err := m.change(n, ready); err != nil {
					return err
				}
			}
		}
		if _, err := m.view.waitFor(m.ctx, []string{deleted}, period+applyWait, back); err != nil {
			return fmt.Errorf("the repair of %s's load balancer: %w", deleted, err)
		}
	}
	return nil
}

// repaired reports whether the load balancer of vip, deleted out of band
// after HNS had created creates load balancers, is back. Where HNS modifies,
// the repair's create is the only one (a readiness flip is an update),
// and hnssim's counters are cheaper than a dump of every load balancer;
// elsewhere every flip replaces its group's, so the view looks.
func (m *measure) repaired(node *framework.Node, vip string, creates int) (bool, error) {
	if !m.modifies {
		_, exists, err := m.view.backends(m.ctx, vip)
		return exists, err
	}
	now, err := loadBalancerCreates(m.ctx, node)
	return now > creates, err
}

// loadBalancerCreates counts the load balancers HNS created.
func loadBalancerCreates(ctx context.Context, node *framework.Node) (int, error) {
	c, err := node.Sim.Stats(ctx)
	return c.Calls[sim.OpCreateLoadBalancer][sim.ResultOK], err
}

// report fills the latency figures.
func (m *measure) report(r *report) {
	r.Changes = len(m.normal.total)
	r.ProgrammingP50Seconds, r.ProgrammingP99Seconds, r.ProgrammingMaxSeconds = quantile(m.normal.total, 0.50), quantile(m.normal.total, 0.99), quantile(m.normal.total, 1)
	r.SplitChanges = len(m.normal.slices)
	r.SlicesP50Seconds, r.SlicesP99Seconds = quantile(m.normal.slices, 0.50), quantile(m.normal.slices, 0.99)
	r.ProxyP50Seconds, r.ProxyP99Seconds = quantile(m.normal.proxy, 0.50), quantile(m.normal.proxy, 0.99)
	r.RepairListings = m.repairs.mark().started
	r.RepairChanges = len(m.repair.total)
	r.RepairProgrammingP50Seconds, r.RepairProgrammingP99Seconds, r.RepairProgrammingMaxSeconds = quantile(m.repair.total, 0.50), quantile(m.repair.total, 0.99), quantile(m.repair.total, 1)
	r.RepairProxyP50Seconds, r.RepairProxyP99Seconds = quantile(m.repair.proxy, 0.50), quantile(m.repair.proxy, 0.99)
}
