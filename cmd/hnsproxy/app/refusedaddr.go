package app

import (
	"errors"

	"github.com/hnsproxy/hnsproxy/reconciler"
)

// reportRefusedAddresses raises HNSEndpointAddressRefused on each Service
// whose load balancer leaves a backend out because HNS refuses that
// backend's remote endpoint for its address (reconciler.AddressRefusedError:
// another program's endpoint holds it, or HNS takes it for reserved), once
// per load balancer, backend and error. It reads the statuses only while
// such a refusal is new or reported.
func (o *observer) reportRefusedAddresses(r reconciler.SyncResult) {
	refused := map[string]error{}
	for _, e := range r.Errors {
		var ar *reconciler.AddressRefusedError
		if e.Kind == reconciler.KindRemoteEndpoint && errors.As(e.Err, &ar) {
			refused[ar.IP] = e.Err
		}
	}
	if len(refused) == 0 && len(o.refusedAddrs) == 0 {
		return
	}
	still := map[string]bool{}
	for _, st := range o.statuses.StatusSnapshot().LoadBalancers {
		for _, ip := range st.MissingBackends {
			k := st.Key.String() + " " + ip
			if _, reported := o.refusedAddrs[k]; reported {
				still[k] = true
			}
			err, ok := refused[ip]
			if !ok || o.refusedAddrs[k] == err.Error() {
				continue
			}
			svc, port, ok := splitOwner(st.Owner)
			if !ok {
				continue
			}
			o.refusedAddrs[k], still[k] = err.Error(), true
			o.events.EndpointAddressRefused(svc, port, st.Key.String(), ip, err)
		}
	}
	for k := range o.refusedAddrs {
		if !still[k] {
			delete(o.refusedAddrs, k)
		}
	}
}
