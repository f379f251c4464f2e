package diag

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// Prefixes of the notes localPolicyAbsent writes, which a trace that meets
// the frontend repeats.
const (
	noteInternalLocal = "internalTrafficPolicy Local and no ready endpoint on this node"
	noteExternalLocal = "externalTrafficPolicy Local and no ready endpoint on this node"
)

// localPolicyAbsent explains the frontends a Local traffic policy leaves
// without a load balancer on this node: the Service has usable endpoints
// on other nodes and none here (the desired state's NoLocalInternal and
// NoLocalExternal, what kube-proxy's no-local-endpoints metric counts), and
// no load balancer of that policy is programmed here. Each policy is read
// on its own: a Service with both Local has both frontends empty. Where
// other ports or the other family of the policy have a local endpoint
// (a local pod that does not name one target port is in the slice of the
// others only), the note counts the ports left empty.
func (v *view) localPolicyAbsent(n types.NamespacedName, res desired.ServiceResult) []string {
	clusterIP, external := false, false
	for _, lb := range res.LBs {
		if _, role := v.frontends.servicePort(lb.Key); role == RoleClusterIP {
			clusterIP = true
		} else {
			external = true
		}
	}
	var out []string
	if res.NoLocalInternal > 0 {
		out = append(out, noteInternalLocal+someOf(res.NoLocalInternal, clusterIP)+": by design hnsproxy programs no load balancer on its cluster IP here, so pods and the host of this node cannot reach it (kube-proxy drops this traffic too)")
	}
	if res.NoLocalExternal > 0 {
		why := noteExternalLocal + someOf(res.NoLocalExternal, external) + ": by design hnsproxy programs none of its node-port, external-IP or load-balancer-ingress load balancers here, so traffic for them arriving here is dropped"
		if svc := v.services[n]; svc != nil && svc.Spec.Type == v1.ServiceTypeLoadBalancer && svc.Spec.HealthCheckNodePort != 0 && !external {
			why += fmt.Sprintf("; its health-check node port %d answers 503 here, so a cloud load balancer sends none", svc.Spec.HealthCheckNodePort)
		}
		out = append(out, why)
	}
	return out
}

// someOf says how many of the Service's ports a note is about when others
// of the same policy have their load balancers here (some), and nothing
// when it is about all of them. Ports are counted per IP family, as the
// desired state counts them.
func someOf(ports int, some bool) string {
	if !some {
		return ""
	}
	if ports == 1 {
		return " for 1 of its ports (in one IP family)"
	}
	return fmt.Sprintf(" for %d of its ports (counted per IP family)", ports)
}

// localPolicyNote is the note of localPolicyAbsent a frontend of role meets.
func localPolicyNote(role string) string {
	if role == RoleClusterIP {
		return noteInternalLocal
	}
	return noteExternalLocal
}
