package reconciler

import (
	"slices"

	"github.com/hnsproxy/hnsproxy/intent"
)

// The full walks of the status, which production never pays: tests compare
// StatusSnapshot with them and read single statuses through them.

// Statuses reports every load balancer's status, sorted by key.
func (r *Reconciler) Statuses() []Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Status, 0, len(r.lbs))
	for _, e := range r.lbs {
		s := e.status()
		s.MissingBackends = slices.Clone(s.MissingBackends)
		if s.Desired != nil {
			d := *s.Desired
			d.Backends = slices.Clone(d.Backends)
			s.Desired = &d
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Status) int { return intent.CompareLBKeys(a.Key, b.Key) })
	return out
}

// EndpointStatuses reports every tracked remote endpoint's status, sorted by IP.
func (r *Reconciler) EndpointStatuses() []EndpointStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]EndpointStatus, 0, len(r.eps))
	for _, ep := range r.eps {
		out = append(out, r.endpointStatusOf(ep))
	}
	slices.SortFunc(out, func(a, b EndpointStatus) int { return intent.CompareIPs(a.Endpoint.IP, b.Endpoint.IP) })
	return out
}
