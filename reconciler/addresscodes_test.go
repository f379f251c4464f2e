package reconciler

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestAddressTakenCodeVariants: which code HNS answers an endpoint create
// whose address another endpoint holds is not known (0xb7, 0x1392 and
// 0x803b002f are each on record). Under each, on each profile, a remote
// endpoint create refused for its address waits for a listing, and then:
// one whose lost reply made it is adopted; one of ours that HNS kept after
// its delete is deleted and the new one made; one another program holds
// with other settings fails with an AddressRefusedError naming it, lists
// nothing more, and is made once the holder goes.
func TestAddressTakenCodeVariants(t *testing.T) {
	for _, code := range sim.AddressTakenCodes() {
		for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
			for _, sc := range []struct {
				name string
				run  func(t *testing.T, e *env, r *Reconciler)
			}{
				{"lost reply", refusedAfterALostReply},
				{"kept endpoint of ours", refusedForAKeptEndpoint},
				{"another program's endpoint", refusedForAForeignEndpoint},
			} {
				t.Run(fmt.Sprintf("0x%x/%s/%s", uint32(code), profile, sc.name), func(t *testing.T) {
					e := newEnvVariants(t, profile, sim.ErrorVariants{AddressTaken: code})
					e.local("10.244.1.10")
					r := e.started()
					met := &codesMet{Client: e.hns}
					r.client = newDeadlines(met, r.opts, r.log)
					sc.run(t, e, r)
					if !met.met(code) {
						t.Errorf("no endpoint create met 0x%x, the code this run is for (met %#x)", uint32(code), met.codes)
					}
				})
			}
		}
	}
}

// refusedAfterALostReply: HNS made the endpoint but its reply was lost; the
// retry is refused, and the listing shows the endpoint, which is adopted.
func refusedAfterALostReply(t *testing.T, e *env, r *Reconciler) {
	d := lb("10.96.0.30", 443, rem("10.244.3.31", "192.168.0.3"))
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateEndpoint: 1}, Committed: 1,
		Errors: []hnslb.ErrorCode{hnslb.CodeTimeout}})
	upsert(r, d)
	if res := r.Sync(ctx); res.Failed == 0 {
		t.Fatalf("lost reply: %+v", res)
	}
	e.hns.SetFaults(sim.Faults{})
	e.converge(r)
	e.assertRealized([]intent.LB{d})
	if n := len(e.remoteIPs()); n != 1 {
		t.Errorf("%d remote endpoints, want the one the lost reply made", n)
	}
	e.assertStateFileMatchesHNS()
}

// keptEndpointReused has r realize a load balancer with a remote backend
// at 10.244.3.31, deletes it while HNS keeps every delete, and upserts a
// load balancer on that pod IP at another node: it returns that one and
// the kept endpoint's ID.
func (e *env) keptEndpointReused(r *Reconciler) (after intent.LB, kept string) {
	e.t.Helper()
	before := lb("10.96.0.30", 443, rem("10.244.3.31", "192.168.0.3"))
	upsert(r, before)
	e.converge(r)
	kept = e.remoteID("10.244.3.31")
	e.removeKept(r, before.Key)
	after = lb("10.96.0.40", 443, rem("10.244.3.31", "192.168.0.4"))
	upsert(r, after)
	return after, kept
}

// refusedForAKeptEndpoint: HNS reported the delete of our endpoint done
// and kept it; its address comes back on another node.
func refusedForAKeptEndpoint(t *testing.T, e *env, r *Reconciler) {
	after, old := e.keptEndpointReused(r)
	if res := e.syncListed(r); res.Failed != 0 || e.hasObject(old) {
		t.Errorf("sync after the lookup: %+v; the kept endpoint still there: %v", res, e.hasObject(old))
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	e.assertRealized([]intent.LB{after})
	if got := e.remoteAt("10.244.3.31"); got.ProviderAddress != "192.168.0.4" {
		t.Errorf("remote endpoint at 10.244.3.31 has provider address %q, want the new node's", got.ProviderAddress)
	}
}

// refusedForAForeignEndpoint: another program's remote endpoint holds the
// address with another provider address.
func refusedForAForeignEndpoint(t *testing.T, e *env, r *Reconciler) {
	d := lb("10.96.0.30", 443, rem("10.244.3.31", "192.168.0.3"))
	other := intent.RemoteEndpoint{IP: "10.244.3.31", ProviderAddress: "192.168.0.9"}
	holder, err := e.hns.CreateEndpoint(ctx, e.netID, buildRemoteEndpoint(e.netID, other))
	if err != nil {
		t.Fatal(err)
	}
	upsert(r, d)
	res := e.syncListed(r)
	var refused *AddressRefusedError
	if st := waitingStatus(r, intent.LBKey{}, "10.244.3.31"); res.Failed == 0 || !errors.As(st.lastErr, &refused) ||
		len(refused.Holders) != 1 || refused.Holders[0].ID != holder.ID || !strings.Contains(st.lastErr.Error(), holder.ID) {
		t.Fatalf("after the listing: %+v, endpoint status %+v; want an AddressRefusedError naming %s", res, st, holder.ID)
	}
	if !e.hasObject(holder.ID) {
		t.Fatal("another program's endpoint was deleted")
	}
	// Retries back off and list nothing.
	listed := e.fullListings()
	for range 3 {
		e.clock.Step(DefaultRetryMax)
		if res := r.Sync(ctx); res.ListingWanted || e.fullListings() != listed {
			t.Fatalf("a retry asked or made a listing: %+v", res)
		}
	}
	if err := e.hns.DeleteEndpoint(ctx, holder.ID); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	e.assertRealized([]intent.LB{d})
}

// TestReservedAddressIsRefusedWithoutAHolder: HNS refuses an endpoint's
// address as invalid or reserved (0x803b002f) while nothing holds it, as it
// refused an overlay source VIP (kubernetes/kubernetes#100962). After one
// listing shows no holder, the endpoint fails with an AddressRefusedError
// that says so, its retries back off without listing, the load balancer
// beside it is programmed, and no listing looks for it once it is no longer
// wanted (HNS surely made nothing); when HNS takes the address, it is made.
func TestReservedAddressIsRefusedWithoutAHolder(t *testing.T) {
	for _, code := range sim.AddressTakenCodes() {
		t.Run(fmt.Sprintf("0x%x", uint32(code)), func(t *testing.T) {
			e := newEnvVariants(t, sim.ProfileWS2022, sim.ErrorVariants{AddressTaken: code})
			e.local("10.244.1.10")
			r := e.started()
			e.hns.SetFaults(sim.Faults{ReservedAddresses: []netip.Addr{netip.MustParseAddr("10.244.3.31")}})
			d := lb("10.96.0.30", 443, rem("10.244.3.31", "192.168.0.3"), loc("10.244.1.10"))
			upsert(r, d)
			res := e.answerAll(r, e.syncListed(r)) // each listing shows no holder
			var refused *AddressRefusedError
			st := waitingStatus(r, intent.LBKey{}, "10.244.3.31")
			if res.Failed == 0 || !errors.As(st.lastErr, &refused) || len(refused.Holders) != 0 ||
				!strings.Contains(st.lastErr.Error(), "invalid or reserved") || !hnslb.IsAddressRefused(st.lastErr) {
				t.Fatalf("after the listing: %+v, endpoint status %+v; want an AddressRefusedError with no holder", res, st)
			}
			if l := e.hnsLB(d.Key); l == nil || len(l.HostComputeEndpoints) != 1 {
				t.Errorf("the load balancer is not programmed with its local backend: %+v", l)
			}
			listed := e.fullListings()
			for range 3 {
				e.clock.Step(DefaultRetryMax)
				if res := r.Sync(ctx); res.ListingWanted || e.fullListings() != listed {
					t.Fatalf("a retry asked or made a listing: %+v", res)
				}
			}
			// HNS surely made nothing: with the Service gone there is no
			// lost create to look for.
			remove(r, d.Key)
			if res := r.Sync(ctx); res.ListingWanted || res.Failed+res.Pending != 0 {
				t.Errorf("the refused endpoint no longer wanted: %+v", res)
			}
			e.hns.SetFaults(sim.Faults{})
			upsert(r, d)
			e.converge(r)
			e.assertRealized([]intent.LB{d})
		})
	}
}
