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
// lacks the IDs of endpoints the batch creates before it.
type pendingLB struct {
	lbWrite
	fills []endpointFill
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

// pipelineResult is what CreateEndpointsThenLoadBalancers returns: the
// endpoint creates' IDs and errors, and per load balancer write what
// CreateLoadBalancers returns, with its document as made.
type pipelineResult struct {
	epIDs                []string
	epErrs               []error
	lbs                  []*hnslb.LoadBalancer
	lbDocs               []*hnslb.LoadBalancer
	lbErrs, lbDeleteErrs []error
}

// CreateEndpointsThenLoadBalancers makes, in one batch, the endpoint
// creates of specs and then the load balancer writes, each document
// completed with the IDs the creates before it returned. A scale step or
// a pod replaced made them as two batches, each a hand-over to the
// deadline's goroutine that woke the idle processor (about 0.07 ms of CPU
// each on a 2-core machine). A write whose endpoint create failed is not
// made (errEndpointNotMade, its delete neither); its turn makes it
// without that backend, as after two batches.
func (d *deadlines) CreateEndpointsThenLoadBalancers(ctx context.Context, networkID string, specs []intent.RemoteEndpoint, writes []pendingLB) pipelineResult {
	type reply struct {
		id string
		lb *hnslb.LoadBalancer
	}
	n := len(specs) + len(writes)
	for _, w := range writes {
		if w.replaces != "" {
			n++
		}
	}
	calls := make([]func(context.Context) (reply, error), 0, n)
	tokens := make([]string, 0, n)
	ops := make([]string, 0, n)
	ids := make([]string, len(specs)) // written and read on the batch's goroutine
	errs := make([]error, len(specs))
	for i, s := range specs {
		calls = append(calls, func(ctx context.Context) (reply, error) {
			got, err := d.createEndpoint(ctx, networkID, buildRemoteEndpoint(networkID, s))
			if err != nil {
				errs[i] = err
				return reply{}, err
			}
			ids[i] = got.ID
			return reply{id: got.ID}, nil
		})
		tokens, ops = append(tokens, epToken(s.IP)), append(ops, "create_endpoint")
	}
	for _, w := range writes {
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
				err := d.c.DeleteLoadBalancer(ctx, w.replaces)
				if err != nil && !hnslb.IsNotFound(err) {
					return reply{}, err
				}
				deleted = true
				return reply{}, nil
			})
			tokens, ops = append(tokens, idToken(w.replaces)), append(ops, "delete_load_balancer")
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
		tokens, ops = append(tokens, docToken(w.doc)), append(ops, "create_load_balancer")
	}
	out, callErrs := guardBatchOf(d, ctx, func(i int) string { return ops[i] }, calls, tokens)
	res := pipelineResult{
		epIDs: make([]string, len(specs)), epErrs: callErrs[:len(specs)],
		lbs: make([]*hnslb.LoadBalancer, len(writes)), lbDocs: make([]*hnslb.LoadBalancer, len(writes)),
		lbErrs: make([]error, len(writes)), lbDeleteErrs: make([]error, len(writes)),
	}
	for i := range specs {
		res.epIDs[i] = out[i].id
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
