package reconciler

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// The HNS calls the reconciler makes, each through guard with its deadline
// (deadline.go); operation names are metrics' operation label values.

// Network reads the reconciler's HNS network (the overlay's remote subnet
// routes are policies on it) with a call deadline, without the lock.
func (r *Reconciler) Network(ctx context.Context) (*hnslb.Network, error) {
	if r.client == nil {
		return nil, errors.New("reconciler: no HNS client")
	}
	return r.client.GetNetworkByID(ctx, r.opts.NetworkID)
}

// HNSActivity reports whether a caller waits on an HNS call now, and when a
// call last returned or was abandoned at its deadline: liveness takes a
// sync loop busy with HNS for alive.
func (r *Reconciler) HNSActivity() (waiting bool, lastEnded time.Time) {
	if r.client == nil {
		return false, time.Time{}
	}
	return r.client.activity()
}

// docToken is the frontend token of a load balancer document, if it has one.
func docToken(lb *hnslb.LoadBalancer) string {
	if k, ok := KeyOf(lb); ok {
		return lbToken(k)
	}
	return ""
}

// guardDelete is guard for a delete by ID.
func guardDelete(d *deadlines, ctx context.Context, op string, del func(context.Context, string) error, id string) error {
	_, err := guard(d, ctx, op, d.call, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, del(ctx, id)
	}, idToken(id))
	return err
}

// The calls the reconciler makes, each with its deadline.

func (d *deadlines) CreateLoadBalancer(ctx context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	return guard(d, ctx, hnslb.OpCreateLoadBalancer, d.call, func(ctx context.Context) (*hnslb.LoadBalancer, error) {
		return d.createLoadBalancer(ctx, lb)
	}, docToken(lb))
}

// createLoadBalancer and createEndpoint are the client's creates, where a
// reply without a document (so without an ID) is an error that leaves the
// create uncertain, as a timeout does: HNS may have made the object, and
// the retry looks for it.
func (d *deadlines) createLoadBalancer(ctx context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	got, err := d.c.CreateLoadBalancer(ctx, lb)
	if err != nil {
		d.failed.note(lb)
		d.refused.note(hnslb.OpCreateLoadBalancer, lb, "", err)
	}
	if err == nil && (got == nil || got.ID == "") {
		return nil, hnslb.NewError(hnslb.OpCreateLoadBalancer, hnslb.CodeTimeout, "HNS answered no load balancer for %s", docToken(lb))
	}
	lowerLBGUIDs(got)
	return got, err
}

func (d *deadlines) createEndpoint(ctx context.Context, networkID string, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	got, err := d.c.CreateEndpoint(ctx, networkID, e)
	d.suspect.noteCreate(err)
	canonicalEndpoint(got)
	if err == nil && (got == nil || got.ID == "") {
		return nil, hnslb.NewError(hnslb.OpCreateEndpoint, hnslb.CodeTimeout, "HNS answered no endpoint for %s", e.IP())
	}
	return got, err
}

func (d *deadlines) UpdateLoadBalancer(ctx context.Context, id string, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	return guard(d, ctx, hnslb.OpUpdateLoadBalancer, d.call, func(ctx context.Context) (*hnslb.LoadBalancer, error) {
		return d.updateLoadBalancer(ctx, id, lb)
	}, idToken(id), docToken(lb))
}

func (d *deadlines) DeleteLoadBalancer(ctx context.Context, id string) error {
	return guardDelete(d, ctx, hnslb.OpDeleteLoadBalancer, d.deleteLoadBalancer, id)
}

// updateLoadBalancer and deleteLoadBalancer are the client's, with a
// refusal noted (refusals.go).
func (d *deadlines) updateLoadBalancer(ctx context.Context, id string, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	got, err := d.c.UpdateLoadBalancer(ctx, id, lb)
	d.refused.note(hnslb.OpUpdateLoadBalancer, lb, id, err)
	lowerLBGUIDs(got)
	return got, err
}

func (d *deadlines) deleteLoadBalancer(ctx context.Context, id string) error {
	err := d.c.DeleteLoadBalancer(ctx, id)
	d.refused.note(hnslb.OpDeleteLoadBalancer, nil, id, err)
	return err
}

func (d *deadlines) GetLoadBalancerByID(ctx context.Context, id string) (*hnslb.LoadBalancer, error) {
	return hnslb.GetLooking(func() (*hnslb.LoadBalancer, error) {
		return guard(d, ctx, hnslb.OpGetLoadBalancer, d.call, func(ctx context.Context) (*hnslb.LoadBalancer, error) {
			lb, err := d.c.GetLoadBalancerByID(ctx, id)
			lowerLBGUIDs(lb)
			return lb, err
		})
	})
}

func (d *deadlines) ListLoadBalancers(ctx context.Context) ([]hnslb.LoadBalancer, error) {
	return guard(d, ctx, hnslb.OpListLoadBalancers, d.list, func(ctx context.Context) ([]hnslb.LoadBalancer, error) {
		lbs, err := d.c.ListLoadBalancers(ctx)
		lowerLBsGUIDs(lbs)
		return onceByID(lbs, lbID), err
	})
}

// WalkLoadBalancers is ListLoadBalancers one document at a time
// (hnslb.Walker), with a listing's deadline.
func (d *deadlines) WalkLoadBalancers(ctx context.Context, fn func(*hnslb.LoadBalancer) error) error {
	return guardWalk(d, ctx, hnslb.OpListLoadBalancers, func(ctx context.Context, fn func(*hnslb.LoadBalancer) error) error {
		return hnslb.WalkLoadBalancers(ctx, d.c, fn)
	}, func(lb *hnslb.LoadBalancer) error {
		lowerLBGUIDs(lb)
		return fn(lb)
	})
}

// WalkEndpointsOfNetwork is ListEndpointsOfNetwork one document at a time.
func (d *deadlines) WalkEndpointsOfNetwork(ctx context.Context, networkID string, fn func(*hnslb.Endpoint) error) error {
	return guardWalk(d, ctx, hnslb.OpListEndpointsOfNetwork, func(ctx context.Context, fn func(*hnslb.Endpoint) error) error {
		return hnslb.WalkEndpointsOfNetwork(ctx, d.c, networkID, fn)
	}, func(ep *hnslb.Endpoint) error {
		canonicalEndpoint(ep)
		return fn(ep)
	})
}

// guardWalk is guard for a walk. Once it returns fn is neither running nor
// called again, even if the walk was abandoned and goes on: the caller
// owns what fn writes from then on. The walk's context ends with it, so a
// client that heeds it stops reading.
func guardWalk[T any](d *deadlines, ctx context.Context, op string, walk func(context.Context, func(*T) error) error, fn func(*T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	over := false
	gated := func(doc *T) error {
		mu.Lock()
		defer mu.Unlock()
		if over {
			return errTimeout(op, "abandoned")
		}
		return fn(doc)
	}
	_, err := guard(d, ctx, op, d.list, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, walk(ctx, gated)
	})
	mu.Lock()
	over = true
	mu.Unlock()
	return err
}

func (d *deadlines) CreateEndpoint(ctx context.Context, networkID string, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	return guard(d, ctx, hnslb.OpCreateEndpoint, d.call, func(ctx context.Context) (*hnslb.Endpoint, error) {
		return d.createEndpoint(ctx, networkID, e)
	}, epToken(e.IP()))
}

// lbWrite is one load balancer of a batch (WriteBatch): doc to create,
// after deleting replaces (its frontend's load balancer now, where HNS
// cannot modify one) if that is set. The create is not made unless the
// delete went through (HNS not finding the old one counts): where HNS
// cannot modify, an update is a delete and a create, and as calls of their
// own they were two hand-overs to a goroutine per update.
type lbWrite struct {
	doc      *hnslb.LoadBalancer
	replaces string
}

// errReplacedKept is the error of a create not made because deleting the
// load balancer it replaces failed.
var errReplacedKept = errors.New("not created: deleting the load balancer it replaces failed")

func (d *deadlines) DeleteEndpoint(ctx context.Context, id string) error {
	return guardDelete(d, ctx, hnslb.OpDeleteEndpoint, d.c.DeleteEndpoint, id)
}

func (d *deadlines) GetEndpointByID(ctx context.Context, id string) (*hnslb.Endpoint, error) {
	return hnslb.GetLooking(func() (*hnslb.Endpoint, error) {
		return guard(d, ctx, hnslb.OpGetEndpoint, d.call, func(ctx context.Context) (*hnslb.Endpoint, error) {
			ep, err := d.c.GetEndpointByID(ctx, id)
			canonicalEndpoint(ep)
			return ep, err
		})
	})
}

func (d *deadlines) ListEndpointsOfNetwork(ctx context.Context, networkID string) ([]hnslb.Endpoint, error) {
	return guard(d, ctx, hnslb.OpListEndpointsOfNetwork, d.list, func(ctx context.Context) ([]hnslb.Endpoint, error) {
		eps, err := d.c.ListEndpointsOfNetwork(ctx, networkID)
		canonicalEndpoints(eps)
		return onceByID(eps, epID), err
	})
}

// ListEndpoints lists every network's endpoints (Cleanup's listing).
func (d *deadlines) ListEndpoints(ctx context.Context) ([]hnslb.Endpoint, error) {
	return guard(d, ctx, hnslb.OpListEndpoints, d.list, func(ctx context.Context) ([]hnslb.Endpoint, error) {
		eps, err := d.c.ListEndpoints(ctx)
		canonicalEndpoints(eps)
		return onceByID(eps, epID), err
	})
}

// GetNetworkByID reads a network; "not found" makes the network suspect
// (network.go).
func (d *deadlines) GetNetworkByID(ctx context.Context, id string) (*hnslb.Network, error) {
	n, err := hnslb.GetLooking(func() (*hnslb.Network, error) {
		return guard(d, ctx, hnslb.OpGetNetwork, d.call, func(ctx context.Context) (*hnslb.Network, error) {
			return d.c.GetNetworkByID(ctx, id)
		})
	})
	if hnslb.IsNotFound(err) {
		d.suspect.set.Store(true)
	}
	return n, err
}

func (d *deadlines) ServiceInstance(ctx context.Context) (string, error) {
	return guard(d, ctx, hnslb.OpServiceInstance, d.call, d.c.ServiceInstance)
}

// ListNamespaces lists the node's namespaces with the call deadline, not a
// listing's: a Sync lists them (a new pod's endpoint), holding the lock
// the sync loop waits for, and a node's pods are few (a few hundred hcn
// RPCs, under a second). With the listing deadline a hung HNS held the
// loop two minutes there (TestANamespaceListingInASyncHasTheCallDeadline).
func (d *deadlines) ListNamespaces(ctx context.Context) ([]hnslb.Namespace, error) {
	return guard(d, ctx, hnslb.OpListNamespaces, d.call, d.c.ListNamespaces)
}
