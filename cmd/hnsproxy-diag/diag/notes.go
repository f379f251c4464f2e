package diag

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// notes are where the state file was written and what it owns on other
// networks, then, per
// Service, the problems the desired state reports (the events hnsproxy
// raises) and the frontends left unprogrammed by design.
func (v *view) notes() []string {
	names := make([]types.NamespacedName, 0, len(v.state.Services))
	for n := range v.state.Services {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	out := append(v.writtenElsewhere(), v.ownedElsewhere()...)
	for _, n := range names {
		res := v.state.Services[n]
		for _, p := range append(slices.Clone(res.Problems), v.state.Conflicts(n)...) {
			out = append(out, fmt.Sprintf("%s: %s: %s", n, p.Reason, p.Message))
		}
		for _, why := range v.localPolicyAbsent(n, res) {
			out = append(out, fmt.Sprintf("%s: %s", n, why))
		}
	}
	return out
}
