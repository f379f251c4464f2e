package diag

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// tenantDual is a dual-stack Service web/tenant on pod dual-a with an
// external IP of each family: frontends a tenant chose, which hnsproxy
// never takes from another agent (reconciler/foreign.go).
func tenantDual() []runtime.Object {
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "tenant"},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeClusterIP, ClusterIP: "10.96.0.70", ClusterIPs: []string{"10.96.0.70", "fd00:10:96::70"},
			IPFamilies: []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol}, ExternalIPs: []string{"203.0.113.70", "2001:db8::70"},
			Ports: []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	pod := func(ip string) map[string][2]string { return map[string][2]string{ip: {"dual-a", self}} }
	return []runtime.Object{svc, webSlice("tenant", "tenant-4", discoveryv1.AddressTypeIPv4, pod(dualA)),
		webSlice("tenant", "tenant-6", discoveryv1.AddressTypeIPv6, pod(dualA6))}
}

// TestForeignHolderOfATenantFrontendIsSaidToStay: another agent's load
// balancer holds each family's external IP of a dual-stack Service, and
// the IPv6 cluster IP's frontend. hnsproxy replaces the one on the
// cluster IP, which the apiserver allocated, but never deletes another
// agent's on a tenant's frontend outside a takeover: it reports the
// Service (ForeignLoadBalancerConflict) and waits. The table said of each
// that hnsproxy deletes it at its next sync, sending an operator to wait
// for a fix that never comes. Under every echo.
func TestForeignHolderOfATenantFrontendIsSaidToStay(t *testing.T) {
	for _, name := range append(sim.EchoNames(), "", "all") {
		echo, err := sim.ParseEcho(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run("echo="+name, func(t *testing.T) {
			f := newFixtureOn(t, fixtureNode{profile: sim.ProfileWS2025, network: hnslb.NetworkTypeL2Bridge, dualStack: true}, echo, tenantDual()...)
			for _, lb := range f.hns.Snapshot().LoadBalancers {
				k, _ := reconciler.KeyOf(&lb)
				if k.VIP != "203.0.113.70" && k.VIP != "2001:db8::70" && k.VIP != "fd00:10:96::70" {
					continue
				}
				if err := f.hns.DeleteLoadBalancerOutOfBand(lb.ID); err != nil {
					t.Fatal(err)
				}
				lb.ID = ""
				lb.PortMappings[0].InternalPort = 9090
				if _, err := f.hns.PutLoadBalancerOutOfBand(lb); err != nil {
					t.Fatal(err)
				}
			}
			r := Diagnose(f.read())
			seen := map[string]bool{}
			for _, row := range r.LoadBalancers {
				if row.Service != "web/tenant:http" || (row.Role != RoleExternalIP && !strings.HasPrefix(row.Frontend, "[fd00:10:96::70]")) {
					continue
				}
				seen[row.Frontend] = true
				if row.State != StateDiffers || row.Owner != OwnerForeign {
					t.Errorf("row %+v: want a foreign load balancer that differs", row)
					continue
				}
				deletes := hasLine(row.Why, "hnsproxy deletes it")
				if row.Role == RoleExternalIP && (deletes || !hasLine(row.Why, "never deletes", "ForeignLoadBalancerConflict", "--takeover")) {
					t.Errorf("external IP row says %q; want it said to stay, reported, until removed or a takeover", row.Why)
				}
				if row.Role == RoleClusterIP && !deletes {
					t.Errorf("cluster IP row says %q; want it said to be replaced", row.Why)
				}
			}
			if len(seen) != 3 {
				t.Errorf("rows of the held frontends: %v, want both external IPs and the IPv6 cluster IP", seen)
			}
		})
	}
}
