package reconciler

import (
	"context"
	"fmt"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// refusingFamily is an HNS that refuses the load balancer creates of one
// family while refuse is set, as a node whose HNS lacks that family's
// support, or a bad document of one family, would.
type refusingFamily struct {
	hnslb.Client
	ipv6   bool
	refuse *bool
}

func (f refusingFamily) CreateLoadBalancer(ctx context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	if *f.refuse && lb.IsIPv6() == f.ipv6 {
		return nil, hnslb.NewError(hnslb.OpCreateLoadBalancer, hnslb.CodeInvalidParameter, "refused")
	}
	return f.Client.CreateLoadBalancer(ctx, lb)
}

// TestOneFamilyRefusedUnderEveryEcho: a dual-stack Service (cluster IP,
// external IP and node port of each family) whose load balancers HNS
// refuses in one family: the other family's are programmed and done, the
// refused ones are in error, and once HNS accepts them their retry makes
// them, without touching the other family's; then a repair period and a
// restart write nothing. Under every echo.
func TestOneFamilyRefusedUnderEveryEcho(t *testing.T) {
	for _, refusedV6 := range []bool{true, false} {
		t.Run(fmt.Sprintf("IPv6 refused %v", refusedV6), func(t *testing.T) {
			onEveryEchoAndStack(t, func(t *testing.T, e *env, fams []familyCase) {
				if len(fams) != 2 {
					return // a dual-stack Service needs both families
				}
				refuse := true
				var want []intent.LB
				for _, f := range fams {
					np := familyLB(f, "", 30080, loc(f.pod))
					np.Origin, np.PortFlags = intent.OriginNodePort, hnslb.PortMappingFlagsLocalRoutedVIP|hnslb.PortMappingFlagsVipExternalIP
					want = append(want, familyLB(f, f.cluster, 80, loc(f.pod), rem(f.remotePod, "")), tenantLB(f, 8080), np)
				}
				r, _ := e.start(refusingFamily{e.hns, refusedV6, &refuse}, want...)
				for range 5 { // retries, each refused again
					if r.Sync(ctx).ListingWanted {
						if err := r.Lookup(ctx); err != nil {
							t.Fatal(err)
						}
					}
					e.clock.Step(DefaultRetryMax)
				}
				made := map[intent.LBKey]string{}
				for _, d := range want {
					st := statusOf(r, d.Key)
					refused := (d.Key.Family == intent.IPv6) == refusedV6
					if refused != (st.State == StateError) || refused != (e.hnsLB(d.Key) == nil) {
						t.Errorf("%s while one family is refused: %+v", d.Key, st)
					}
					if !refused {
						made[d.Key] = st.RealizedID
					}
				}
				refuse = false
				e.converge(r)
				e.assertRealized(want)
				for k, id := range made {
					if got := statusOf(r, k); got.RealizedID != id {
						t.Errorf("%s was rewritten (%s, then %s) when the other family's went through", k, id, got.RealizedID)
					}
				}
				e.quietAfter(r, "after both families went through", want)
			})
		})
	}
}
