package reconciler

import (
	"slices"

	"github.com/hnsproxy/hnsproxy/intent"
)

// leftOutLocals lists the load balancers waiting for local backends' HNS
// endpoints (remote ones are ours to create, so only a delay).
func (r *Reconciler) leftOutLocals() []LeftOutBackends {
	byKey := map[intent.LBKey][]string{}
	for ip, keys := range r.waiting {
		if _, known := r.eps[ip]; known {
			continue // a remote endpoint of ours, being created
		}
		for k := range keys {
			byKey[k] = append(byKey[k], ip)
		}
	}
	if len(byKey) == 0 {
		return nil
	}
	out := make([]LeftOutBackends, 0, len(byKey))
	for k, ips := range byKey {
		slices.SortFunc(ips, intent.CompareIPs)
		out = append(out, LeftOutBackends{Key: k, IPs: ips})
	}
	slices.SortFunc(out, func(a, b LeftOutBackends) int { return intent.CompareLBKeys(a.Key, b.Key) })
	return out
}
