package diag

import (
	"context"
	"os"
	"slices"
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

// holdByAnotherAgent replaces hnsproxy's load balancers on vips with
// another agent's, which send to port 9090.
func (f *fixture) holdByAnotherAgent(t *testing.T, vips ...string) {
	t.Helper()
	for _, lb := range f.hns.Snapshot().LoadBalancers {
		if k, _ := reconciler.KeyOf(&lb); !slices.Contains(vips, k.VIP) {
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
			f.holdByAnotherAgent(t, "203.0.113.70", "2001:db8::70", "fd00:10:96::70")
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

// TestDiagnoseOwnsWhatARestartClaims: hnsproxy was killed (or crash-loops)
// after HNS applied creates whose replies were lost, or after failed
// creates left load balancers without port mappings, for a dual-stack
// Service with an external IP of each family. Its state file declares
// those frontends, and records the failures; a restart (and --cleanup)
// claims what they made as hnsproxy's. The table read them as another
// agent's, left alone, which on a tenant's frontend said hnsproxy would
// never touch them. Under every echo.
func TestDiagnoseOwnsWhatARestartClaims(t *testing.T) {
	for _, name := range append(sim.EchoNames(), "", "all") {
		echo, err := sim.ParseEcho(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"reply lost", "left without port mappings"} {
			t.Run("echo="+name+"/"+how, func(t *testing.T) {
				f := newFixtureOn(t, fixtureNode{profile: sim.ProfileWS2025, network: hnslb.NetworkTypeL2Bridge, dualStack: true}, echo)
				before := map[string]bool{}
				for _, lb := range f.hns.Snapshot().LoadBalancers {
					before[lb.ID] = true
				}
				faults := sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}, Committed: 1, Errors: []hnslb.ErrorCode{hnslb.CodeTimeout}}
				if how == "left without port mappings" {
					faults = sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}, PartialCreates: 1}
				}
				f.killedCreating(faults, tenantDual()...)
				var made int
				for _, row := range Diagnose(f.read()).LoadBalancers {
					if before[strings.ToLower(row.ID)] || row.ID == "" {
						continue
					}
					made++
					if row.Owner != OwnerHNSProxy {
						t.Errorf("row %+v: want hnsproxy's, as its restart claims it", row)
					}
				}
				if made < 2 {
					t.Errorf("%d load balancers made by the killed hnsproxy in the table, want at least each family's external IP", made)
				}
			})
		}
	}
}

// killedCreating adds objs to the cluster and runs hnsproxy's reconciler
// over the fixture's state file until it tried the creates they need,
// under faults, and leaves it there, as a process killed then.
func (f *fixture) killedCreating(faults sim.Faults, objs ...runtime.Object) {
	f.t.Helper()
	ctx := context.Background()
	f.create(objs...)
	rec := f.startHNSProxy(ctx)
	f.hns.SetFaults(faults)
	defer f.hns.SetFaults(sim.Faults{})
	if rec.Sync(ctx).ListingWanted { // a new tenant frontend is first looked at
		if err := rec.Lookup(ctx); err != nil {
			f.t.Fatal(err)
		}
		rec.Sync(ctx)
	}
}

// create makes the Services and EndpointSlices objs in the fixture's API.
func (f *fixture) create(objs ...runtime.Object) {
	f.t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1.Service:
			_, err = f.kube.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *discoveryv1.EndpointSlice:
			_, err = f.kube.DiscoveryV1().EndpointSlices(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			f.t.Fatal(err)
		}
	}
}

// TestDiagnoseWithoutAStateFileSaysTheNextStartTakesOver: with no state
// file (hnsproxy never started on the node, as while moving off
// kube-proxy, or the file was removed), every load balancer is foreign and
// hnsproxy's first start is a takeover, which replaces another agent's on
// a tenant's frontend too. The diagnosis said ownership came "from the
// state file" and that hnsproxy never deletes such a one; it now says
// there is none and that the next start replaces it, which it does. So
// too with a state file whose journal is damaged, which hnsproxy's next
// start also takes as a takeover.
func TestDiagnoseWithoutAStateFileSaysTheNextStartTakesOver(t *testing.T) {
	for _, tc := range []struct {
		lost, ownership string
		lose            func(t *testing.T, stateFile string)
	}{
		{"no state file", "no state file", func(t *testing.T, stateFile string) {
			for _, p := range []string{stateFile, stateFile + ".journal"} {
				if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
		}},
		// A damaged journal is a takeover too, though the file is there.
		{"a damaged journal", "damage skipped", func(t *testing.T, stateFile string) {
			j, err := os.OpenFile(stateFile+".journal", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			if _, err := j.WriteString("{\"torn\n{}\n"); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.lost, func(t *testing.T) { diagnoseLostOwnership(t, tc.ownership, tc.lose) })
	}
}

func diagnoseLostOwnership(t *testing.T, ownership string, lose func(t *testing.T, stateFile string)) {
	f := newFixtureOn(t, fixtureNode{profile: sim.ProfileWS2025, network: hnslb.NetworkTypeL2Bridge, dualStack: true}, sim.Echo{}, tenantDual()...)
	f.holdByAnotherAgent(t, "203.0.113.70")
	lose(t, f.stateFile)
	external := func(r *Report) Row {
		for _, row := range r.LoadBalancers {
			if row.Role == RoleExternalIP && strings.HasPrefix(row.Frontend, "203.0.113.70") {
				return row
			}
		}
		t.Fatal("no row for the external IP")
		return Row{}
	}
	r := Diagnose(f.read())
	before := external(r)
	if !strings.Contains(r.Ownership, ownership) || !strings.Contains(r.Ownership, "takes this node over") {
		t.Errorf("ownership %q, want it to say %q and that the next start takes over", r.Ownership, ownership)
	}
	if before.Owner != OwnerForeign || hasLine(before.Why, "never deletes") || !hasLine(before.Why, "replaces it then") {
		t.Errorf("external IP row %s, why %q: want foreign, replaced at the next start", before.Owner, before.Why)
	}
	// What hnsproxy's first start does.
	rec := f.startHNSProxy(context.Background())
	rec.Sync(context.Background())
	if after := external(Diagnose(f.read())); after.ID == before.ID || after.State != StateOK {
		t.Errorf("after hnsproxy's first start the external IP row is %s %s (was %s)", after.State, after.ID, before.ID)
	}
}
