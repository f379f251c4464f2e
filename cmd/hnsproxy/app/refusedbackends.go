package app

import (
	"errors"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// refusedBackends is what the observer reported of the backends load
// balancers leave out because HNS refuses their remote endpoints for good
// (refusedForGood), by load balancer key and backend: the error of each, so
// a refusal HNS keeps giving is one event, not one per retry; and per HNS
// error code, where the refusals are raised. One address refused leaves
// its backend out of every load balancer it is in (a pod in 500 Services),
// and HNS refusing every remote endpoint leaves every remote backend out:
// one event each would be a storm like HNSLoadBalancerRejected's
// (rejections.go).
type refusedBackends struct {
	reported map[string]refusedBackend
	bounds   boundsByCode
}

// refusedBackend is one backend's refusal as raised: its error and code, and
// the Service port whose load balancer leaves it out.
type refusedBackend struct {
	err                error
	code               string
	svc                types.NamespacedName
	port, frontend, ip string
}

func newRefusedBackends() refusedBackends {
	return refusedBackends{reported: map[string]refusedBackend{}, bounds: boundsByCode{}}
}

// refusedForGood reports a remote endpoint's failure that HNS gives again
// at every retry of the same document, so its backend stays out until
// something outside hnsproxy changes: its address refused after a listing
// showed what holds it (reconciler.AddressRefusedError), or a document HNS
// will not take (hnslb.IsInvalidParameter: ERROR_INVALID_PARAMETER and the
// HCN error code table's invalid network, endpoint, policy, JSON, IP ...
// codes; 0x803b001e, "IP address is either invalid or not part of any
// configured subnet(s)", answered an overlay source VIP's endpoint in
// kubernetes-sigs/sig-windows-tools#250). HNS unavailable or hung, a call
// the stop cut short, and codes whose meaning is not known are for later:
// no event (the outage log and healthz say the first).
func refusedForGood(err error) bool {
	return errors.As(err, new(*reconciler.AddressRefusedError)) || hnslb.IsInvalidParameter(err)
}

// reportRefusedBackends raises an event on each Service whose load
// balancer leaves a backend out because HNS refuses that backend's remote
// endpoint for good: HNSEndpointAddressRefused for its address (another
// program's endpoint holds it, or HNS takes it for reserved),
// HNSEndpointRejected for a document HNS will not take; once per load
// balancer, backend and error; while more than events.MaxRaisedOneByOne
// backends are left out for refusals with one HNS error code, for that
// many of them, then one on the Node, the rest once few are
// (events.Bound). It reads the statuses only while such a refusal is new
// or reported.
func (o *observer) reportRefusedBackends(r reconciler.SyncResult) {
	rb := &o.refusedBackends
	refused := map[string]error{}
	for _, e := range r.Errors {
		if e.Kind == reconciler.KindRemoteEndpoint && refusedForGood(e.Err) {
			refused[e.Name] = e.Err
		}
	}
	if len(refused) == 0 && len(rb.reported) == 0 {
		return
	}
	snap := o.statuses.StatusSnapshot()
	if snap.Gathering { // no statuses yet: read again at the next Sync
		return
	}
	var due []string // refused anew, or with another error; then owed
	fresh, still := map[string]bool{}, map[string]bool{}
	for _, st := range snap.LoadBalancers {
		for _, ip := range st.MissingBackends {
			k := st.Key.String() + " " + ip
			was, reported := rb.reported[k]
			still[k] = reported
			err, ok := refused[ip]
			if !ok || reported && was.err.Error() == err.Error() {
				continue
			}
			svc, port, ok := splitOwner(st.Owner)
			if !ok {
				continue
			}
			rb.reported[k] = refusedBackend{err: err, code: errorCode(err), svc: svc, port: port, frontend: st.Key.String(), ip: ip}
			still[k], fresh[k] = true, true
			due = append(due, k)
		}
	}
	codeOf := make(map[string]string, len(rb.reported))
	for k, rf := range rb.reported {
		if !still[k] {
			delete(rb.reported, k)
			continue
		}
		codeOf[k] = rf.code
	}
	due = append(due, rb.bounds.round(codeOf, fresh)...)
	// One event per Service and reason (and per reason on the Node) for
	// this Sync's refusals (events.Batch).
	ev, flush := o.events.Batch()
	defer flush()
	for _, k := range due {
		rf := rb.reported[k]
		forAddress := errors.As(rf.err, new(*reconciler.AddressRefusedError))
		switch placed := rb.bounds.next(rf.code, k); {
		case placed == events.OnObject && forAddress:
			ev.EndpointAddressRefused(rf.svc, rf.port, rf.frontend, rf.ip, rf.err)
		case placed == events.OnObject:
			ev.EndpointRejected(rf.svc, rf.port, rf.frontend, rf.ip, rf.err)
		case placed == events.OnNode && forAddress:
			ev.EndpointAddressesRefused(rf.code, events.MaxRaisedOneByOne, rf.svc, rf.port, rf.frontend, rf.ip, rf.err)
		case placed == events.OnNode:
			ev.EndpointsRejected(rf.code, events.MaxRaisedOneByOne, rf.svc, rf.port, rf.frontend, rf.ip, rf.err)
		default:
			klog.V(2).InfoS("Backend left out for its refused remote endpoint; not raised on its Service", "service", rf.svc, "frontend", rf.frontend, "backend", rf.ip)
		}
	}
}
