package diag

import (
	"cmp"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
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
		if why := v.localOnlyAbsent(n, res); why != "" {
			out = append(out, fmt.Sprintf("%s: %s", n, why))
		}
	}
	return out
}

// localOnlyAbsent explains an externalTrafficPolicy Local Service whose
// external frontends have no load balancer on this node because none of
// its endpoints runs here; "" otherwise.
func (v *view) localOnlyAbsent(n types.NamespacedName, res desired.ServiceResult) string {
	svc := v.services[n]
	if svc == nil || svc.Spec.ExternalTrafficPolicy != v1.ServiceExternalTrafficPolicyLocal ||
		(svc.Spec.Type != v1.ServiceTypeNodePort && svc.Spec.Type != v1.ServiceTypeLoadBalancer) {
		return ""
	}
	for _, lb := range res.LBs {
		if _, role := v.frontends.servicePort(lb.Key); role != RoleClusterIP {
			return "" // some external frontend is programmed here
		}
	}
	if len(res.LBs) == 0 {
		return "" // no endpoints anywhere: nothing is programmed for it on any node
	}
	why := "externalTrafficPolicy Local and no ready endpoint on this node: by design hnsproxy programs none of its node-port, external-IP or load-balancer-ingress load balancers here, so traffic for them arriving here is dropped"
	if svc.Spec.HealthCheckNodePort != 0 {
		why += fmt.Sprintf("; its health-check node port %d answers 503 here, so a cloud load balancer sends none", svc.Spec.HealthCheckNodePort)
	}
	return why
}
