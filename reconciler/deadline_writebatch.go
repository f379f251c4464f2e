package reconciler

import (
	"context"
	"errors"
	"slices"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// endpointFill is a place in a load balancer's document (its
// HostComputeEndpoints[pos]) that the ID of the same batch's endpoint
// create ep fills.
type endpointFill struct{ pos, ep int }

// pendingLB is a load balancer write of a batch whose document still
// lacks the IDs of endpoints the batch creates before it: a create (after
// the delete of the one it replaces) or, where HNS can modify, the modify
// of the realized load balancer modifies in place.
type pendingLB struct {
	lbWrite
	modifies string
	fills    []endpointFill
}

// filled is w's document with the IDs of the endpoint creates it waits
// for, and false if one of them failed: a copy, so the caller's stays as
// it was while the batch's goroutine reads it.
func (w pendingLB) filled(ids []string, errs []error) (*hnslb.LoadBalancer, bool) {
	if len(w.fills) == 0 {
		return w.doc, true
	}
	doc := *w.doc
	doc.HostComputeEndpoints = slices.Clone(w.doc.HostComputeEndpoints)
	for _, f := range w.fills {
		if errs[f.ep] != nil || ids[f.ep] == "" {
			return nil, false
		}
		doc.HostComputeEndpoints[f.pos] = ids[f.ep]
	}
	return &doc, true
}

// errEndpointNotMade is the error of a load balancer write not made
// because a create of an endpoint it names failed in the same batch.
var errEndpointNotMade = errors.New("not made: an endpoint it uses was not created")

// freedDelete is an endpoint delete of a batch that waits for the deletes
// of the load balancers that used the endpoint (writes[after[i]].replaces):
// it is made only if each went through.
type freedDelete struct {
	id    string
	after []int
}

// errStillUsed is the error of an endpoint delete not made because a load
// balancer that used it was not deleted in the same batch.
var errStillUsed = errors.New("not deleted: a load balancer that used it was not deleted")

// writeBatchResult is what WriteBatch returns: the endpoint creates' IDs
// and errors; per load balancer write its create's (or modify's) reply and error, its
// document as made (nil if an endpoint it uses was not created) and, where
// it replaces one, that delete's error; and the endpoint deletes' errors.
type writeBatchResult struct {
	epIDs  []string
	epErrs []error
	// epNames is what the creates' replies showed of HNS keeping remote
	// endpoint names (names.go): lost if any lacked it.
	epNames              nameEcho
	lbs                  []*hnslb.LoadBalancer
	lbDocs               []*hnslb.LoadBalancer
	lbErrs, lbDeleteErrs []error
	epDeleteErrs         []error
}

// WriteBatch makes, in one batch, the endpoint creates of specs, then the
// load balancer writes (a create, after the delete of the one it replaces,
// or a modify in place), each document completed with the IDs the creates
// before it returned, then the endpoint deletes those writes free. A scale
// step or a pod replaced made them as two or three batches, each a
// hand-over to the deadline's goroutine that woke the idle processor. A
// write whose endpoint create failed is not made (errEndpointNotMade, its
// delete neither), nor a delete whose endpoint a load balancer still uses
// (errStillUsed); their turns make them, as after separate batches. Each
// endpoint's document is built just before its call and each reply is kept
// as its ID only: a cold start's batch (20,002 endpoints at 10,000
// Services on overlay) held every document and every reply until it
// ended, some 25 MB at once.
func (d *deadlines) WriteBatch(ctx context.Context, networkID string, specs []intent.RemoteEndpoint, writes []pendingLB, deletes []freedDelete) writeBatchResult {
	type reply struct {
		id    string
		names nameEcho
		lb    *hnslb.LoadBalancer
	}
	n := len(specs) + len(writes) + len(deletes)
	for _, w := range writes {
		if w.replaces != "" {
			n++
		}
	}
	calls := make([]func(context.Context) (reply, error), 0, n)
	tokens := make([]string, 0, n)
	lbOps := make([]string, 0, n-len(specs)-len(deletes)) // the load balancer calls'
	// The creates' outcomes as the load balancer writes after them read
	// them, on the batch's goroutine; kept only if there are such writes
	// (a cold start's 20,000 creates have none).
	var ids []string
	var errs []error
	if len(writes) > 0 {
		ids, errs = make([]string, len(specs)), make([]error, len(specs))
	}
	for i, s := range specs {
		calls = append(calls, func(ctx context.Context) (reply, error) {
			got, err := d.createEndpoint(ctx, networkID, buildRemoteEndpoint(networkID, s))
			if ids != nil {
				if err != nil {
					errs[i] = err
				} else {
					ids[i] = got.ID
				}
			}
			if err != nil {
				return reply{}, err
			}
			return reply{id: got.ID, names: namesShown(got)}, nil
		})
		tokens = append(tokens, epToken(s.IP))
	}
	replaced := make([]bool, len(writes)) // the write's delete, or its modify, went through: the old backends are free
	for j, w := range writes {
		if w.modifies != "" {
			calls = append(calls, func(ctx context.Context) (reply, error) {
				doc, ok := w.filled(ids, errs)
				if !ok {
					return reply{}, errEndpointNotMade
				}
				got, err := d.updateLoadBalancer(ctx, w.modifies, doc)
				if err == nil {
					replaced[j] = true // the endpoints it no longer names are free
				}
				return reply{lb: got}, err
			})
			tokens, lbOps = append(tokens, idToken(w.modifies)), append(lbOps, hnslb.OpUpdateLoadBalancer)
			continue
		}
		var doc *hnslb.LoadBalancer
		ready := func() bool {
			if doc == nil {
				var ok bool
				if doc, ok = w.filled(ids, errs); !ok {
					return false
				}
			}
			return true
		}
		deleted := w.replaces == ""
		if w.replaces != "" {
			calls = append(calls, func(ctx context.Context) (reply, error) {
				if !ready() {
					return reply{}, errEndpointNotMade
				}
				err := d.deleteLoadBalancer(ctx, w.replaces)
				if err != nil && !hnslb.IsNotFound(err) {
					return reply{}, err
				}
				deleted, replaced[j] = true, true
				return reply{}, err // not found: gone already (madeAhead)
			})
			tokens, lbOps = append(tokens, idToken(w.replaces)), append(lbOps, hnslb.OpDeleteLoadBalancer)
		}
		calls = append(calls, func(ctx context.Context) (reply, error) {
			switch {
			case !ready():
				return reply{}, errEndpointNotMade
			case !deleted:
				return reply{}, errReplacedKept
			}
			got, err := d.createLoadBalancer(ctx, doc)
			return reply{lb: got}, err
		})
		tokens, lbOps = append(tokens, docToken(w.doc)), append(lbOps, hnslb.OpCreateLoadBalancer)
	}
	for _, del := range deletes {
		calls = append(calls, func(ctx context.Context) (reply, error) {
			for _, j := range del.after {
				if !replaced[j] {
					return reply{}, errStillUsed
				}
			}
			return reply{}, d.c.DeleteEndpoint(ctx, del.id)
		})
		tokens = append(tokens, idToken(del.id))
	}
	opOf := func(i int) string {
		switch {
		case i < len(specs):
			return hnslb.OpCreateEndpoint
		case i >= len(calls)-len(deletes):
			return hnslb.OpDeleteEndpoint
		}
		return lbOps[i-len(specs)]
	}
	out, callErrs := guardBatch(d, ctx, opOf, calls, tokens)
	res := writeBatchResult{
		epIDs: make([]string, len(specs)), epErrs: callErrs[:len(specs)],
		lbs: make([]*hnslb.LoadBalancer, len(writes)), lbDocs: make([]*hnslb.LoadBalancer, len(writes)),
		lbErrs: make([]error, len(writes)), lbDeleteErrs: make([]error, len(writes)),
		epDeleteErrs: callErrs[len(calls)-len(deletes):],
	}
	for i := range specs {
		res.epIDs[i] = out[i].id
		res.epNames = max(res.epNames, out[i].names)
	}
	i := len(specs)
	for j, w := range writes {
		if w.replaces != "" {
			res.lbDeleteErrs[j] = callErrs[i]
			i++
		}
		res.lbs[j], res.lbErrs[j] = out[i].lb, callErrs[i]
		// Built again here from the replies the caller holds: the batch's
		// copy may still be in use by a call it abandoned.
		res.lbDocs[j], _ = w.filled(res.epIDs, res.epErrs)
		i++
	}
	return res
}
