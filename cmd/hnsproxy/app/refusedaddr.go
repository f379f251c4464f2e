package app

import (
	"errors"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// refusedAddrs is what the observer reported of the backends load
// balancers leave out because HNS refuses their remote endpoints'
// addresses, by load balancer key and backend: the error of each, so a
// refusal HNS keeps giving is one event, not one per retry; and per HNS
// error code, where the refusals are raised. One address refused leaves
// its backend out of every load balancer it is in (a pod in 500 Services),
// and HNS refusing every remote endpoint leaves every remote backend out:
// one event each would be a storm like HNSLoadBalancerRejected's
// (rejections.go).
type refusedAddrs struct {
	reported map[string]refusedAddr
	bounds   boundsByCode
}

// refusedAddr is one backend's refusal as raised: its error and code, and
// the Service port whose load balancer leaves it out.
type refusedAddr struct {
	err                error
	code               string
	svc                types.NamespacedName
	port, frontend, ip string
}

func newRefusedAddrs() refusedAddrs {
	return refusedAddrs{reported: map[string]refusedAddr{}, bounds: boundsByCode{}}
}

// reportRefusedAddresses raises HNSEndpointAddressRefused on each Service
// whose load balancer leaves a backend out because HNS refuses that
// backend's remote endpoint for its address (reconciler.AddressRefusedError:
// another program's endpoint holds it, or HNS takes it for reserved), once
// per load balancer, backend and error; while more than
// events.MaxRaisedOneByOne backends are left out for refusals with one HNS
// error code, for that many of them, then one on the Node, the rest once
// few are (events.Bound). It reads the statuses only while such a refusal
// is new or reported.
func (o *observer) reportRefusedAddresses(r reconciler.SyncResult) {
	ra := &o.refusedAddrs
	refused := map[string]error{}
	for _, e := range r.Errors {
		var ar *reconciler.AddressRefusedError
		if e.Kind == reconciler.KindRemoteEndpoint && errors.As(e.Err, &ar) {
			refused[ar.IP] = e.Err
		}
	}
	if len(refused) == 0 && len(ra.reported) == 0 {
		return
	}
	var due []string // refused anew, or with another error; then owed
	fresh, still := map[string]bool{}, map[string]bool{}
	for _, st := range o.statuses.StatusSnapshot().LoadBalancers {
		for _, ip := range st.MissingBackends {
			k := st.Key.String() + " " + ip
			was, reported := ra.reported[k]
			still[k] = reported
			err, ok := refused[ip]
			if !ok || reported && was.err.Error() == err.Error() {
				continue
			}
			svc, port, ok := splitOwner(st.Owner)
			if !ok {
				continue
			}
			ra.reported[k] = refusedAddr{err: err, code: errorCode(err), svc: svc, port: port, frontend: st.Key.String(), ip: ip}
			still[k], fresh[k] = true, true
			due = append(due, k)
		}
	}
	codeOf := make(map[string]string, len(ra.reported))
	for k, rf := range ra.reported {
		if !still[k] {
			delete(ra.reported, k)
			continue
		}
		codeOf[k] = rf.code
	}
	due = append(due, ra.bounds.round(codeOf, fresh)...)
	for _, k := range due {
		rf := ra.reported[k]
		switch ra.bounds.next(rf.code, k) {
		case events.OnObject:
			o.events.EndpointAddressRefused(rf.svc, rf.port, rf.frontend, rf.ip, rf.err)
		case events.OnNode:
			o.events.EndpointAddressesRefused(rf.code, events.MaxRaisedOneByOne, rf.svc, rf.port, rf.frontend, rf.ip, rf.err)
		default:
			klog.V(2).InfoS("Backend left out for its refused address; not raised on its Service", "service", rf.svc, "frontend", rf.frontend, "backend", rf.ip)
		}
	}
}
