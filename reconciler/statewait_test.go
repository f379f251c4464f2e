package reconciler

import (
	"strings"
	"syscall"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestACreateDeclaredMidSyncWaitsForTheStateFile: a create
// on a tenant's frontend (an external IP: no standing declaration) that a
// foreign load balancer held is declared on the spot once the holder is
// gone (createLB's declareNow), after the Sync's own declarations, and the
// disk is full by then. Every other create the state file cannot record
// waits, pending, its status naming the state file (reliability.md, F3);
// this one failed as if HNS had refused it: counted as failed, logged "HNS
// operation failed", and its ObjectError reached the Service as "HNS
// rejected the load balancer". It waits like the others, with the same
// backoff, and is made once the state file can be written.
func TestACreateDeclaredMidSyncWaitsForTheStateFile(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	three := e.threeServices()
	r := e.started(three...)
	tenant, id := e.heldByAnother(r)
	if err := e.hns.DeleteLoadBalancer(ctx, id); err != nil {
		t.Fatal(err)
	}
	disk := fillDisk(r)
	for range 3 {
		e.clock.Step(DefaultRetryMax)
		res := r.Sync(ctx)
		if res.Failed != 0 || len(res.Errors) != 0 {
			t.Fatalf("a create the state file cannot record: %+v, want it waiting, not failed", res)
		}
		if st := statusOf(r, tenant.Key); st.State != StatePending || !strings.Contains(st.LastError, errStateUnwritable.Error()) {
			t.Fatalf("status %+v, want pending on the state file", st)
		}
	}
	disk.set(nil)
	e.converge(r)
	e.assertRealized(append(three, tenant))
}

// TestACreateAModifyLeadsToWaitsForTheStateFile: a load balancer whose
// backends change is modified in place; HNS answers that it cannot
// modify, so it is replaced, and the create is declared on the spot
// (modifyLB's declareForCreate: declareCreates left the key out expecting
// a modify), and the disk is full. Like the create above it waits,
// pending on the state file, not failed as if HNS had refused it (counted
// failed, logged "HNS operation failed" and raised on its Service as
// HNSLoadBalancerRejected); it is replaced once the state file can be
// written.
func TestACreateAModifyLeadsToWaitsForTheStateFile(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025) // ModifyLoadBalancer
	e.local("10.244.1.10")
	e.local("10.244.1.11")
	d := externalLB("203.0.113.5", 80, loc("10.244.1.10")) // no standing declaration
	r := e.started(d)
	disk := fillDisk(r)
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpUpdateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeNotImplemented}})
	d = externalLB("203.0.113.5", 80, loc("10.244.1.10"), loc("10.244.1.11"))
	upsert(r, d)
	for range 3 {
		res := r.Sync(ctx)
		if res.Failed != 0 || len(res.Errors) != 0 {
			t.Fatalf("a create the state file cannot record: %+v, want it waiting, not failed", res)
		}
		if st := statusOf(r, d.Key); st.State != StatePending || !strings.Contains(st.LastError, errStateUnwritable.Error()) {
			t.Fatalf("status %+v, want pending on the state file", st)
		}
		e.clock.Step(DefaultRetryMax)
	}
	disk.set(nil)
	e.converge(r)
	e.assertRealized([]intent.LB{d})
}

// fillDisk has every write and sync of r's state file fail as on a full
// disk until the returned disk is set back (disk.set(nil)).
func fillDisk(r *Reconciler) *faultFS {
	disk := &faultFS{}
	disk.set(func(op, _ string) error {
		if op == "write" || op == "sync" {
			return syscall.ENOSPC
		}
		return nil
	})
	useStateFS(r, disk)
	return disk
}
