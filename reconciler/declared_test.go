package reconciler

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// declaredClient checks, at every create, that the state file on disk
// declares the key or IP being created (what a kill at that moment would
// leave to the restart), and for a load balancer the distribution its
// create sends (sentdecl.go), failing the test otherwise.
type declaredClient struct {
	hnslb.Client
	t         *testing.T
	stateFile string
}

func (c *declaredClient) CreateLoadBalancer(ctx context.Context, l *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	k, _ := KeyOf(l)
	if s := readState(c.t, c.stateFile); !slices.Contains(s.CreatingLoadBalancers, k) {
		c.t.Errorf("load balancer %s created while the state file declares only %v", k, s.CreatingLoadBalancers)
	} else if sent, want := s.sentOf()[k], sentText(l.PortMappings[0].DistributionType); sent != want {
		c.t.Errorf("load balancer %s created with distribution %s while its declaration records %q", k, want, sent)
	}
	return c.Client.CreateLoadBalancer(ctx, l)
}

func (c *declaredClient) CreateEndpoint(ctx context.Context, n string, ep *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	if s := readState(c.t, c.stateFile); ep.IsRemote() && !slices.Contains(s.CreatingRemoteEndpoints, ep.IP()) {
		c.t.Errorf("remote endpoint %s created while the state file declares only %v", ep.IP(), s.CreatingRemoteEndpoints)
	}
	return c.Client.CreateEndpoint(ctx, n, ep)
}

// TestALoadBalancerWaitingForANewEndpointIsDeclared: a load balancer that
// left out a remote backend whose endpoint could not be created is synced
// again in the Sync that creates the endpoint, though its own retry is not
// due. Without modify that is a new load balancer, so its key must be
// declared before it, like those of the Sync's own work.
func TestALoadBalancerWaitingForANewEndpointIsDeclared(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.11")
	a := lb("10.96.0.10", 80, loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.2"))
	r := New(&declaredClient{Client: e.hns, t: t, stateFile: e.stateFile}, e.options())
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	upsert(r, a)
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateEndpoint: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}})
	r.Sync(ctx)
	e.hns.SetFaults(sim.Faults{})
	if got := e.hnsLB(a.Key); got == nil || len(got.HostComputeEndpoints) != 1 {
		t.Fatalf("after the failed endpoint create HNS holds %+v, want the load balancer with its local backend only", got)
	}
	r.mu.Lock()
	r.lbs[a.Key].st.nextRetry = e.clock.Now().Add(time.Hour) // its own retry is not due
	epRetry := r.eps["10.244.2.20"].st.nextRetry
	r.mu.Unlock()
	e.clock.SetTime(epRetry)
	if res := r.Sync(ctx); res.Created != 1 || res.Updated != 1 {
		t.Fatalf("the endpoint's retry: %+v, want it created and the load balancer replaced", res)
	}
	if got := e.hnsLB(a.Key); got == nil || len(got.HostComputeEndpoints) != 2 {
		t.Errorf("HNS holds %+v, want the load balancer with both backends", got)
	}
}
