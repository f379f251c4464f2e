//go:build windows

package hcnclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// hcn lists in two steps, an enumeration of IDs and then an open, query and
// close of each (hcsshim hcn/hcnloadbalancer.go enumerateLoadBalancers,
// hcn/hcnendpoint.go enumerateEndpoints), and fails the whole listing when
// one object's open fails. The fake's HNSPROXY_FAKE_GONE is an object
// deleted between the two steps, as a pod's endpoint the CNI deletes, a
// pod's namespace the runtime deletes, or a load balancer a Sync deletes
// while Repair lists, can be.

const goneLB = "c0ffee00-0000-4000-8000-0000000000aa"

// listings are the client's listings of every kind of object, load
// balancers and endpoints as a list and as a walk; they return the IDs
// handed over.
func listings() map[string]func(hnslb.Client) ([]string, error) {
	ctx := context.Background()
	ids := func(n int, id func(int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = id(i)
		}
		return out
	}
	lbIDs := func(lbs []hnslb.LoadBalancer, err error) ([]string, error) {
		return ids(len(lbs), func(i int) string { return lbs[i].ID }), err
	}
	epIDs := func(eps []hnslb.Endpoint, err error) ([]string, error) {
		return ids(len(eps), func(i int) string { return eps[i].ID }), err
	}
	return map[string]func(hnslb.Client) ([]string, error){
		"ListLoadBalancers": func(c hnslb.Client) ([]string, error) { return lbIDs(c.ListLoadBalancers(ctx)) },
		"WalkLoadBalancers": func(c hnslb.Client) ([]string, error) {
			var got []string
			err := c.(hnslb.Walker).WalkLoadBalancers(ctx, func(lb *hnslb.LoadBalancer) error { got = append(got, lb.ID); return nil })
			return got, err
		},
		"ListEndpoints": func(c hnslb.Client) ([]string, error) { return epIDs(c.ListEndpoints(ctx)) },
		"ListNamespaces": func(c hnslb.Client) ([]string, error) {
			nss, err := c.ListNamespaces(ctx)
			return ids(len(nss), func(i int) string { return nss[i].ID }), err
		},
		"ListNetworks": func(c hnslb.Client) ([]string, error) {
			ns, err := c.ListNetworks(ctx)
			return ids(len(ns), func(i int) string { return ns[i].ID }), err
		},
		"ListEndpointsOfNetwork": func(c hnslb.Client) ([]string, error) { return epIDs(c.ListEndpointsOfNetwork(ctx, podNet)) },
		"WalkEndpointsOfNetwork": func(c hnslb.Client) ([]string, error) {
			var got []string
			err := c.(hnslb.Walker).WalkEndpointsOfNetwork(ctx, podNet, func(ep *hnslb.Endpoint) error { got = append(got, ep.ID); return nil })
			return got, err
		},
	}
}

// TestListingLeavesOutAnObjectGoneBeforeItIsRead: an object deleted after
// the enumeration listed it is left out, in the one pass, and the listing
// succeeds, for each
// code HNS may answer its open with ("not found" is not known to be one
// code); a listing that cannot go on (HNS down) still fails.
func TestListingLeavesOutAnObjectGoneBeforeItIsRead(t *testing.T) {
	for name, list := range listings() {
		for _, c := range []struct {
			hresult uint32
			fails   func(error) bool // nil: the listing succeeds
		}{
			{hresult: 0x80070490}, // ERROR_NOT_FOUND
			{hresult: 0x803b0002}, // HCN_E_ENDPOINT_NOT_FOUND
			{hresult: 0x800706ba, fails: hnslb.IsUnavailable},
		} {
			t.Run(fmt.Sprintf("%s/0x%x", name, c.hresult), func(t *testing.T) {
				f, client := useFakeHNS(t)
				raw, _ := json.Marshal([]string{lbID, goneLB})
				f.set("IDS", string(raw))
				f.set("OBJECT", `{"ID":"`+lbID+`"}`)
				f.set("GONE", goneLB)
				f.set("GONE_HRESULT", fmt.Sprintf("%x", c.hresult))
				got, err := list(client)
				if c.fails != nil {
					if !c.fails(err) || hnslb.IsNotFound(err) {
						t.Fatalf("listing with HNS down answered %v, %v; want it to fail as unavailable", got, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("listing failed for an object gone before it was read: %v (calls %s)", err, f.calls())
				}
				if strings.Join(got, ",") != lbID {
					t.Errorf("listed %v, want only %s", got, lbID)
				}
				// One pass: the gone object costs its failed open, not a
				// second enumeration and a filtered get per ID.
				calls := f.calls()
				if n := strings.Count(calls, "HcnEnumerate"); n != 1 {
					t.Errorf("listing enumerated %d times, want 1 (calls %s)", n, calls)
				}
				if n := len(strings.Split(calls, ",")); n != 1+3+1 {
					t.Errorf("listing made %d calls, want 5: one enumeration, the listed object's open, query and close, the gone one's open (calls %s)", n, calls)
				}
			})
		}
	}
}

// TestListingStillFailsWhenTheEnumerationFails: "not found" from the
// enumeration itself (a network gone, say) is the listing's answer, not an
// empty list.
func TestListingStillFailsWhenTheEnumerationFails(t *testing.T) {
	for name, list := range listings() {
		t.Run(name, func(t *testing.T) {
			f, client := useFakeHNS(t)
			f.fail("*", 0x803b0001, "")
			if got, err := list(client); !hnslb.IsNotFound(err) {
				t.Errorf("listing answered %v, %v; want HNS's not found", got, err)
			}
		})
	}
}

// TestAListingOfUnreadableIDsFails: IDs HNS answers that are not a JSON
// list, or not GUIDs, fail the listing, as they fail hcn's: a listing that
// answered them as nothing (or as fewer objects) would tell the reconciler
// that HNS holds nothing, and it would make again what is there.
func TestAListingOfUnreadableIDsFails(t *testing.T) {
	for name, list := range listings() {
		for _, ids := range []string{`not a list`, `["` + lbID + `","not-a-guid"]`} {
			t.Run(name+"/"+ids, func(t *testing.T) {
				f, client := useFakeHNS(t)
				f.set("IDS", ids)
				f.set("OBJECT", `{"ID":"`+lbID+`"}`)
				if got, err := list(client); err == nil {
					t.Errorf("HNS answered IDs %s: listed %v, want an error", ids, got)
				}
			})
		}
	}
}
