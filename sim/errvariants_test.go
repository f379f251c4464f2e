package sim

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestErrorVariantsPerProfile: each variant's code is what a missing
// backend (create, and modify where the profile has it) and a missing load
// balancer (modify, get, delete) answer, on every profile; the zero value
// is 0x803b0002 and 0x490.
func TestErrorVariantsPerProfile(t *testing.T) {
	const missingLB = "6f1c2a3b-0000-4000-8000-000000000001"
	for _, p := range Profiles() {
		for _, backend := range append(MissingBackendCodes(), 0) {
			for _, lbCode := range append(MissingLoadBalancerCodes(), 0) {
				t.Run(fmt.Sprintf("%s/backend-0x%x/lb-0x%x", p.Name, uint32(backend), uint32(lbCode)), func(t *testing.T) {
					wantBackend, wantLB := backend, lbCode
					if wantBackend == 0 {
						wantBackend = hnslb.CodeEndpointNotFound
					}
					if wantLB == 0 {
						wantLB = hnslb.CodeNotFound
					}
					h := New(Options{Profile: p, Seed: 1, Variants: ErrorVariants{MissingBackend: backend, MissingLoadBalancer: lbCode}})
					n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
					live := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
					gone := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.6"))
					if err := h.DeleteEndpoint(ctx, gone.ID); err != nil {
						t.Fatal(err)
					}
					lb, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, live.ID))
					if err != nil {
						t.Fatal(err)
					}
					_, err = h.CreateLoadBalancer(ctx, lbDoc("10.96.0.11", 80, live.ID, gone.ID))
					wantCode(t, err, wantBackend)
					if p.modify() != modifyUnsupported {
						_, err = h.UpdateLoadBalancer(ctx, lb.ID, lbDoc("10.96.0.10", 80, live.ID, gone.ID))
						wantCode(t, err, wantBackend)
						_, err = h.UpdateLoadBalancer(ctx, missingLB, lbDoc("10.96.0.10", 80, live.ID))
						wantCode(t, err, wantLB)
					}
					_, err = h.GetLoadBalancerByID(ctx, missingLB)
					wantCode(t, err, wantLB)
					wantCode(t, h.DeleteLoadBalancer(ctx, missingLB), wantLB)
					wantCode(t, h.DeleteLoadBalancerOutOfBand(missingLB), wantLB)
					// Other kinds keep ERROR_NOT_FOUND.
					_, err = h.GetEndpointByID(ctx, missingLB)
					wantCode(t, err, hnslb.CodeNotFound)
					if c := h.Counters(); c.CountResult(OpGetLoadBalancer, hnsCodes[wantLB].name) != 1 {
						t.Errorf("counters do not name the variant's code: %v", c.Calls)
					}
				})
			}
		}
	}
}

func TestErrorVariantsCheck(t *testing.T) {
	for _, v := range []ErrorVariants{{}, {MissingBackend: hnslb.CodePortNotFound}, {MissingLoadBalancer: hnslb.CodeEndpointNotFound}, {AddressTaken: hnslb.CodeAddrInvalidOrReserved}, {MissingNetwork: hnslb.CodeNotFound}} {
		if err := v.Check(); err != nil {
			t.Errorf("%+v: %v", v, err)
		}
	}
	for _, c := range []struct {
		v    ErrorVariants
		want string
	}{
		{ErrorVariants{MissingBackend: hnslb.CodeInvalidParameter}, "missing-backend code 0x57: want one of 0x803b0002, 0x490, 0x803b0007, 0x803b001c"},
		{ErrorVariants{MissingLoadBalancer: hnslb.CodePortNotFound}, "missing-load-balancer code 0x803b0007: want one of 0x490, 0x803b0002"},
		{ErrorVariants{AddressTaken: hnslb.CodePortAlreadyExists}, "address-taken code 0x803b0013: want one of 0xb7, 0x1392, 0x803b002f"},
		{ErrorVariants{MissingNetwork: hnslb.CodeInvalidParameter}, "missing-network code 0x57: want one of 0x803b0001, 0x490"},
	} {
		if err := c.v.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.v, err, c.want)
		}
	}
}

// TestAddressTakenVariantsPerProfile: an endpoint create on an address
// another endpoint of the network holds answers the variant's code (0xb7
// by default), whatever kinds the two are where the profile refuses them; a
// reserved address answers 0x803b002f with no holder, whatever the variant,
// until the fault is lifted.
func TestAddressTakenVariantsPerProfile(t *testing.T) {
	for _, p := range Profiles() {
		for _, code := range append(AddressTakenCodes(), 0) {
			t.Run(fmt.Sprintf("%s/0x%x", p.Name, uint32(code)), func(t *testing.T) {
				want := code
				if want == 0 {
					want = hnslb.CodeAlreadyExists
				}
				h := New(Options{Profile: p, Seed: 1, Variants: ErrorVariants{AddressTaken: code}})
				n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
				mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
				_, err := h.CreateEndpoint(ctx, n.ID, endpointDoc("10.244.1.5"))
				wantCode(t, err, want)
				mustEndpoint(t, h, n.ID, remoteDoc("10.244.2.5", ""))
				_, err = h.CreateEndpoint(ctx, n.ID, remoteDoc("10.244.2.5", ""))
				wantCode(t, err, want)
				_, err = h.CreateEndpoint(ctx, n.ID, remoteDoc("10.244.1.5", ""))
				if p.LocalRemoteIPOverlap {
					if err != nil {
						t.Errorf("remote beside local on %s: %v", p.Name, err)
					}
				} else {
					wantCode(t, err, want)
				}
				if !hnslb.IsAddressRefused(err) && err != nil {
					t.Errorf("%v is not an address refused", err)
				}

				h.SetFaults(Faults{ReservedAddresses: []netip.Addr{netip.MustParseAddr("10.244.1.9")}})
				before := h.Counters().CountResult(OpCreateEndpoint, "AddrInvalidOrReserved")
				_, err = h.CreateEndpoint(ctx, n.ID, endpointDoc("10.244.1.9"))
				wantCode(t, err, hnslb.CodeAddrInvalidOrReserved)
				if c := h.Counters(); c.CountResult(OpCreateEndpoint, "AddrInvalidOrReserved") != before+1 {
					t.Errorf("counters do not name the reserved address's code: %v", c.Calls)
				}
				h.SetFaults(Faults{})
				mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.9"))
			})
		}
	}
}

// TestMissingNetworkVariants: an endpoint create on a network that was
// deleted answers the variant's code (0x803b0001 by default), a "not
// found" to clients; the network's endpoints went with it, and one of the
// same name made again has a new ID.
func TestMissingNetworkVariants(t *testing.T) {
	for _, code := range append(MissingNetworkCodes(), 0) {
		t.Run(fmt.Sprintf("0x%x", uint32(code)), func(t *testing.T) {
			want := code
			if want == 0 {
				want = hnslb.CodeNetworkNotFound
			}
			p, _ := ProfileByName(ProfileWS2022)
			h := New(Options{Profile: p, Seed: 1, Variants: ErrorVariants{MissingNetwork: code}})
			n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
			remote := mustEndpoint(t, h, n.ID, remoteDoc("10.244.2.5", ""))
			if err := h.DeleteNetwork(ctx, n.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := h.GetEndpointByID(ctx, remote.ID); !hnslb.IsNotFound(err) {
				t.Errorf("the deleted network's endpoint: %v, want it gone", err)
			}
			again := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
			if strings.EqualFold(again.ID, n.ID) {
				t.Errorf("the network made again kept ID %s", n.ID)
			}
			_, err := h.CreateEndpoint(ctx, n.ID, remoteDoc("10.244.2.6", ""))
			wantCode(t, err, want)
			if !hnslb.IsNotFound(err) {
				t.Errorf("%v is not a not-found", err)
			}
		})
	}
}

// TestMissingNetworkListingVariants: a listing of the endpoints of a
// network that is gone answers an empty list (the default, as hcn's
// filtered query) or the variant's error; a network that exists lists its
// endpoints under every variant.
func TestMissingNetworkListingVariants(t *testing.T) {
	for _, code := range append([]hnslb.ErrorCode{0}, MissingNetworkCodes()...) {
		t.Run(fmt.Sprintf("0x%x", uint32(code)), func(t *testing.T) {
			p, _ := ProfileByName(ProfileWS2022)
			h := New(Options{Profile: p, Seed: 1, Variants: ErrorVariants{MissingNetworkListing: code}})
			gone := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
			if err := h.DeleteNetwork(ctx, gone.ID); err != nil {
				t.Fatal(err)
			}
			n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
			mustEndpoint(t, h, n.ID, remoteDoc("10.244.2.5", ""))
			if eps, err := h.ListEndpointsOfNetwork(ctx, n.ID); err != nil || len(eps) != 1 {
				t.Errorf("the network's listing: %d endpoints, %v; want 1", len(eps), err)
			}
			eps, err := h.ListEndpointsOfNetwork(ctx, gone.ID)
			if code == 0 {
				if err != nil || len(eps) != 0 {
					t.Errorf("the listing of a network gone: %d endpoints, %v; want an empty list", len(eps), err)
				}
				return
			}
			wantCode(t, err, code)
		})
	}
	if err := (ErrorVariants{MissingNetworkListing: hnslb.CodeInvalidParameter}).Check(); err == nil {
		t.Error("a listing code outside the modelled ones was accepted")
	}
}
