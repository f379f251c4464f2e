package diag

import (
	"context"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// TestDiagnoseTellsARemoteEndpointOnALocalPodFromThePod: on Windows Server
// 2022 a remote endpoint can share a local pod's address (what a previous
// proxy left, kubernetes/kubernetes#138000), and another agent's load
// balancer on a cluster IP reaches web-a through it, so its traffic goes to
// another node. The diagnosis matched backends by address alone and called
// the row ok (exit 0) while hnsproxy replaces that load balancer; it now
// marks the backend other-kind and the row differs, which hnsproxy's start
// then corrects.
func TestDiagnoseTellsARemoteEndpointOnALocalPodFromThePod(t *testing.T) {
	f := newFixture(t) // ws2022
	ctx := context.Background()
	snap := f.hns.Snapshot()
	var network, local string
	for _, ep := range snap.Endpoints {
		if ep.IP() == webA && !ep.IsRemote() {
			network, local = ep.HostComputeNetwork, ep.ID
		}
	}
	remote, err := f.hns.CreateEndpoint(ctx, network, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: webA}},
		Flags: hnslb.EndpointFlagsRemoteEndpoint, Policies: []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
			hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: otherIP})}})
	if err != nil {
		t.Fatal(err)
	}
	for _, lb := range snap.LoadBalancers {
		if k, _ := reconciler.KeyOf(&lb); k.VIP != frontendIP {
			continue
		}
		if err := f.hns.DeleteLoadBalancerOutOfBand(lb.ID); err != nil {
			t.Fatal(err)
		}
		lb.ID = ""
		for i, id := range lb.HostComputeEndpoints {
			if strings.EqualFold(id, local) {
				lb.HostComputeEndpoints[i] = remote.ID
			}
		}
		if _, err := f.hns.PutLoadBalancerOutOfBand(lb); err != nil {
			t.Fatal(err)
		}
	}
	backend := func(r Row, ip string) Backend {
		for _, b := range r.Backends {
			if b.IP == ip {
				return b
			}
		}
		t.Fatalf("row %s has no backend %s: %+v", r.Frontend, ip, r.Backends)
		return Backend{}
	}
	r := Diagnose(f.read())
	before := row(t, r, "web/frontend:http", RoleClusterIP)
	if before.State != StateDiffers || backend(before, webA).State != BackendOtherKind || !hasLine(before.Why, "remote endpoint for a pod of this node") || r.ToCorrect() == 0 {
		t.Errorf("cluster IP row %s, web-a %+v, why %q, %d to correct: want it to differ, web-a reached through a remote endpoint",
			before.State, backend(before, webA), before.Why, r.ToCorrect())
	}
	// What hnsproxy's next start does: it replaces that load balancer.
	rec := f.startHNSProxy(ctx)
	rec.Sync(ctx)
	after := row(t, Diagnose(f.read()), "web/frontend:http", RoleClusterIP)
	if after.ID == before.ID || after.State != StateOK || !strings.EqualFold(backend(after, webA).EndpointID, local) {
		t.Errorf("after hnsproxy's start the cluster IP row is %s %s, web-a %+v (was %s): want hnsproxy's, on web-a's local endpoint",
			after.State, after.ID, backend(after, webA), before.ID)
	}
}
