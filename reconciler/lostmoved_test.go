package reconciler

import (
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A remote endpoint whose create lost its reply after HNS made it, and
// whose spec changed before a listing found it (the pod's address reused on
// another node), is still the lost create's: hnsproxy's, replaced or
// deleted. A restart claims it (declared, or named ours: claimInterrupted);
// within the process it was claimed only if it matched the spec desired
// now. Before, kept wanted, it held the address for good: every create was
// refused as "held by remote endpoint ..., which hnsproxy does not
// replace", and the Service left the backend out on this node until a
// restart; no longer wanted, it was left in HNS, for good where HNS drops
// remote endpoint names.
func TestLostEndpointCreateOfAnOlderSpecIsOurs(t *testing.T) {
	for _, names := range []bool{true, false} {
		for _, wanted := range []bool{true, false} {
			name := map[bool]string{true: "kept wanted", false: "no longer wanted"}[wanted] +
				map[bool]string{true: ", names kept", false: ", declared"}[names]
			t.Run(name, func(t *testing.T) {
				e := newEnv(t, sim.ProfileWS2022)
				if !names {
					e.declaringEndpoints()
				}
				e.local("10.244.1.10")
				alone := lb("10.96.0.10", 80, loc("10.244.1.10"))
				r := e.started(alone)

				e.endpointCreateLost(r, lb("10.96.0.10", 80, loc("10.244.1.10"), rem("10.244.2.20", "192.168.0.2")))

				// The address is now a pod's on another node.
				want := []intent.LB{lb("10.96.0.10", 80, loc("10.244.1.10"), rem("10.244.2.20", "192.168.0.3"))}
				upsert(r, want[0])
				if !wanted {
					r.UpsertEndpoint(intent.RemoteEndpoint{IP: "10.244.2.20", ProviderAddress: "192.168.0.3"})
					upsert(r, alone)
					want = []intent.LB{alone}
				}
				e.converge(r)
				e.assertRealized(want)
				if st := epStatusOf(r, "10.244.2.20"); wanted && st.State != StateDone {
					t.Errorf("endpoint status %+v, want done", st)
				}
				if !wanted {
					e.assertGone(r, alone)
				}
			})
		}
	}
}

// A lost create is no licence to take another program's endpoint: one that
// held the address before, with another provider address and without
// hnsproxy's name, stays, and the endpoint fails as refused.
func TestLostEndpointCreateDoesNotTakeAnotherProgramsEndpoint(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	r := e.started(lb("10.96.0.10", 80, loc("10.244.1.10")))
	other := buildRemoteEndpoint(e.netID, intent.RemoteEndpoint{IP: "10.244.2.20", ProviderAddress: "192.168.0.9"})
	other.Name = ""
	holder, err := e.hns.CreateEndpoint(ctx, e.netID, other)
	if err != nil {
		t.Fatal(err)
	}

	// The create's reply is lost; HNS made nothing.
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateEndpoint: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeTimeout}})
	upsert(r, lb("10.96.0.10", 80, loc("10.244.1.10"), rem("10.244.2.20", "192.168.0.2")))
	r.Sync(ctx)
	e.hns.SetFaults(sim.Faults{})
	upsert(r, lb("10.96.0.10", 80, loc("10.244.1.10"), rem("10.244.2.20", "192.168.0.3")))
	for range 4 {
		if r.Sync(ctx).ListingWanted {
			if err := r.Lookup(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !e.hasObject(holder.ID) {
		t.Fatal("another program's endpoint was deleted")
	}
	if st := epStatusOf(r, "10.244.2.20"); st.State != StateError || !strings.Contains(st.LastError, holder.ID) {
		t.Errorf("endpoint status %+v, want it refused as held by %s", st, holder.ID)
	}
}

// epStatusOf is the status of the remote endpoint at ip (zero if none).
func epStatusOf(r *Reconciler, ip string) EndpointStatus {
	for _, st := range r.EndpointStatuses() {
		if st.Endpoint.IP == ip {
			return st
		}
	}
	return EndpointStatus{}
}

// assertGone requires that neither a drift repair nor a restart finds a
// remote endpoint left in HNS with only alone desired.
func (e *env) assertGone(r *Reconciler, alone intent.LB) {
	e.t.Helper()
	e.repairedAndRestarted(r, alone)
	if got := e.remoteIPs(); len(got) != 0 {
		e.t.Errorf("remote endpoints %v left in HNS, want none", got)
	}
}
