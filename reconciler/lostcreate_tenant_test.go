package reconciler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// lostCreateCase is one way a create's reply is lost: the error HNS
// answered while applying it, the frontend's origin, whether the load
// balancer is sticky, and how HNS echoes it.
type lostCreateCase struct {
	code   hnslb.ErrorCode
	origin intent.Origin
	sticky bool
	ipv6   bool
	echo   string // sim.ParseEcho's
}

func (c lostCreateCase) String() string {
	return fmt.Sprintf("%#x/%v/sticky=%v/ipv6=%v/echo=%s", uint32(c.code), c.origin, c.sticky, c.ipv6, c.echo)
}

// lostCreateCases are HNS down (manager stopped, RPC server unavailable)
// or timing out, a tenant's frontend or a cluster IP, sticky or not, under
// an exact echo or one without distributions; and, HNS down, each of these
// frontends in either family under every other echo and all at once.
func lostCreateCases() []lostCreateCase {
	var out []lostCreateCase
	for _, origin := range []intent.Origin{intent.OriginExternalIP, intent.OriginClusterIP} {
		for _, sticky := range []bool{false, true} {
			for _, code := range []hnslb.ErrorCode{hnslb.CodeManagerStopped, hnslb.CodeRPCServerUnavailable, hnslb.CodeTimeout} {
				for _, echo := range []string{"", sim.EchoDropDistribution} {
					out = append(out, lostCreateCase{code, origin, sticky, false, echo})
				}
			}
			for _, echo := range append(sim.EchoNames(), "all") {
				for _, ipv6 := range []bool{false, true} {
					if !ipv6 && (echo == sim.EchoDropDistribution) {
						continue // above
					}
					out = append(out, lostCreateCase{hnslb.CodeManagerStopped, origin, sticky, ipv6, echo})
				}
			}
			out = append(out, lostCreateCase{hnslb.CodeManagerStopped, origin, sticky, true, ""})
		}
	}
	return out
}

// lostCreates makes three load balancers of c in one Sync, which HNS
// applies while answering each with c's error; made are the IDs HNS gave
// them.
func lostCreates(t *testing.T, c lostCreateCase) (e *env, r *Reconciler, want []intent.LB, made map[intent.LBKey]string) {
	t.Helper()
	e = newEnv(t, sim.ProfileWS2022)
	echo, err := sim.ParseEcho(c.echo)
	if err != nil {
		t.Fatal(err)
	}
	e.hns.SetEcho(echo)
	r = e.started()
	for i := range 3 {
		ip, vip := fmt.Sprintf("10.244.1.%d", 10+i), fmt.Sprintf("203.0.113.%d", 10+i)
		if c.ipv6 {
			ip, vip = fmt.Sprintf("fd00:10:244:1::%d", 10+i), fmt.Sprintf("2001:db8::%d", 10+i)
		}
		want = append(want, e.backedLB(ip, vip, c.ipv6, c.origin, c.sticky))
	}
	upsert(r, want...)
	e.createApplied(r, c.code)
	made = map[intent.LBKey]string{}
	for _, d := range want {
		if got := e.hnsLB(d.Key); got != nil {
			made[d.Key] = got.ID
		}
	}
	if len(made) != len(want) {
		t.Fatalf("HNS applied %d of %d creates", len(made), len(want))
	}
	return e, r, want, made
}

// TestALostCreateIsClaimedWhateverHNSAnswers: a create HNS applied while
// answering that it was down or timing out is found and claimed as
// hnsproxy's, on a tenant's frontend too, in a batch, sticky or not, in
// either family, under every echo: it ends realized with the ID
// HNS gave it (a sticky one HNS answers without its distribution is
// written once more, TestALostStickyCreateMeetsAPlainLoadBalancer, here
// by a delete and a create), a drift repair after it writes nothing, and
// nothing is left on the frontend as another agent's. Found by the fault soak (seed 48213):
// where HNS answers no distribution, a sticky load balancer's lost create
// was read as another's, so its Service's external IP stayed blocked by
// hnsproxy's own load balancer ("ForeignLoadBalancerConflict") for good.
func TestALostCreateIsClaimedWhateverHNSAnswers(t *testing.T) {
	for _, c := range lostCreateCases() {
		t.Run(c.String(), func(t *testing.T) {
			e, r, want, made := lostCreates(t, c)
			e.converge(r)
			e.hns.ResetCounters()
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.converge(r)
			if w := e.counters().Writes(); w != 0 {
				t.Errorf("the repair after the claim wrote %d times", w)
			}
			e.assertRealized(want)
			echo, _ := sim.ParseEcho(c.echo)
			rewritten := c.sticky && echo.DropDistribution
			for _, d := range want {
				if st := statusOf(r, d.Key); st.State != StateDone || strings.EqualFold(st.RealizedID, made[d.Key]) == rewritten {
					t.Errorf("%s: %+v, want done on the applied create's %s (rewritten: %v)", d.Key, st, made[d.Key], rewritten)
				}
			}
		})
	}
}

// TestALostCreateOfAServiceGoneMeanwhileIsDeleted: the Service is deleted
// before a listing tells whether its lost creates were made: the load
// balancers HNS made are found and deleted, none left behind (the soak,
// seed 48213: a sticky one on a cluster IP stayed).
func TestALostCreateOfAServiceGoneMeanwhileIsDeleted(t *testing.T) {
	for _, c := range lostCreateCases() {
		t.Run(c.String(), func(t *testing.T) {
			e, r, want, _ := lostCreates(t, c)
			var keys []intent.LBKey
			for _, d := range want {
				keys = append(keys, d.Key)
			}
			remove(r, keys...)
			e.converge(r)
			e.assertRealized(nil)
		})
	}
}

// backedLB is a load balancer on vip of the given family, origin and
// affinity to a local endpoint at ip, which it makes.
func (e *env) backedLB(ip, vip string, ipv6 bool, origin intent.Origin, sticky bool) intent.LB {
	e.t.Helper()
	d := lb(vip, 91, loc(ip))
	d.Origin = origin
	if origin == intent.OriginExternalIP {
		d.PortFlags = hnslb.PortMappingFlagsVipExternalIP // a flag no capture shows echoed
	}
	if sticky {
		d.Distribution = hnslb.DistributionSourceIP
	}
	if !ipv6 {
		e.local(ip)
		return d
	}
	d.Key.Family, d.SourceVIP = intent.IPv6, "fd00:10:244:1::2"
	if _, err := e.hns.CreateEndpoint(ctx, e.netID, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: ip}}}); err != nil {
		e.t.Fatal(err)
	}
	return d
}

// createApplied syncs r until it tried its creates, which HNS applies
// while answering each with code.
func (e *env) createApplied(r *Reconciler, code hnslb.ErrorCode) {
	e.t.Helper()
	e.createTried(r, code, 1)
}

// createTried syncs r until it tried its creates, which HNS answers with
// code, applying each with the probability committed.
func (e *env) createTried(r *Reconciler, code hnslb.ErrorCode, committed float64) {
	e.t.Helper()
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}, Committed: committed, Errors: []hnslb.ErrorCode{code}})
	for i := 0; e.counters().Count(sim.OpCreateLoadBalancer) == 0; i++ {
		if i > 10 {
			e.t.Fatal("no create tried")
		}
		if r.Sync(ctx).ListingWanted {
			if err := r.Lookup(ctx); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	e.hns.SetFaults(sim.Faults{})
}
