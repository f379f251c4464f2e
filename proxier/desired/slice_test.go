package desired

import (
	"runtime"
	"strings"
	"testing"
	"unique"
	"unsafe"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/intent"
)

// TestSliceOfAppliesTheAPIsDefaults: an unset condition means what the API
// says it means, an endpoint without addresses keeps its place (the
// mapping counts it as invalid), only the first address is kept, and an
// FQDN slice has no family.
func TestSliceOfAppliesTheAPIsDefaults(t *testing.T) {
	s := &discoveryv1.EndpointSlice{
		AddressType: discoveryv1.AddressTypeIPv6,
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"fd00::5", "fd00::6"}},
			{},
			{Addresses: []string{"fd00::7"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(false), Terminating: ptr(true)}},
		},
	}
	s.Name = "web-1"
	got := SliceOf(s)
	want := []Endpoint{
		{Address: "fd00::5", Ready: true, Serving: true},
		{Ready: true, Serving: true},
		{Address: "fd00::7", Terminating: true},
	}
	if got.Name != "web-1" || got.Family != intent.IPv6 || len(got.Endpoints) != len(want) {
		t.Fatalf("SliceOf = %+v", got)
	}
	for i := range want {
		if got.Endpoints[i] != want[i] {
			t.Errorf("endpoint %d = %+v, want %+v", i, got.Endpoints[i], want[i])
		}
	}
	s.AddressType = discoveryv1.AddressTypeFQDN
	if f := SliceOf(s).Family; f != 0 {
		t.Errorf("FQDN slice has family %v", f)
	}
}

// TestSliceOfHoldsANodeNameOnce: endpoints of one node share one copy of
// its name, however many decoded copies the API objects carried, also
// when a garbage collection runs between the two decodes (the interning
// lasts as long as a cached slice holds the name).
func TestSliceOfHoldsANodeNameOnce(t *testing.T) {
	decode := func(ip string) EndpointSlice {
		return SliceOf(&discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{ip}, NodeName: ptr(strings.Clone("win-a"))},
			{Addresses: []string{ip + "0"}},
		}})
	}
	a := decode("10.1.0.2")
	runtime.GC()
	runtime.GC()
	b := decode("10.1.0.3")
	na, nb := a.Endpoints[0].Node.Value(), b.Endpoints[0].Node.Value()
	if na != "win-a" || unsafe.StringData(na) != unsafe.StringData(nb) {
		t.Errorf("node names %q and %q are two copies", na, nb)
	}
	if n := a.Endpoints[1].Node; n != (unique.Handle[string]{}) {
		t.Errorf("endpoint without a node name has %q", n.Value())
	}
}

// TestSliceOfLocalityNeedsANodeName: an endpoint without a node name is
// remote, also to a proxy configured without one.
func TestSliceOfLocalityNeedsANodeName(t *testing.T) {
	cfg := config()
	cfg.NodeName = ""
	s := slice("web-1", 8080, discoveryv1.Endpoint{Addresses: []string{"10.1.0.2"}})
	parsed, _ := parseSlices(slicesOf(s), &cfg, new(buffers))
	if len(parsed) != 1 || len(parsed[0].endpoints) != 1 || parsed[0].endpoints[0].local {
		t.Errorf("parsed %+v, want one remote endpoint", parsed)
	}
}
