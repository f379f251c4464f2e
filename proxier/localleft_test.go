package proxier

import (
	"slices"
	"testing"
	"unique"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// TestLocalEndpointsLeft: which of this node's addresses a slice change
// hands to Reconciler.RecheckLocal.
func TestLocalEndpointsLeft(t *testing.T) {
	self, other := unique.Make("win-1"), unique.Make("win-2")
	ep := func(ip string, node unique.Handle[string], ready bool) desired.Endpoint {
		return desired.Endpoint{Address: ip, Node: node, Ready: ready, Serving: ready}
	}
	// published: ready under publishNotReadyAddresses, serving as the pod is.
	published := func(ip string, serving bool) desired.Endpoint {
		return desired.Endpoint{Address: ip, Node: self, Ready: true, Serving: serving}
	}
	sl := func(eps ...desired.Endpoint) *desired.EndpointSlice { return &desired.EndpointSlice{Endpoints: eps} }
	for _, c := range []struct {
		name        string
		before, now *desired.EndpointSlice
		want        []string
	}{
		{"ready to not ready", sl(ep("10.244.1.5", self, true)), sl(ep("10.244.1.5", self, false)), []string{"10.244.1.5"}},
		{"gone", sl(ep("10.244.1.5", self, true), ep("10.244.1.6", self, true)), sl(ep("10.244.1.6", self, true)), []string{"10.244.1.5"}},
		{"terminating, then gone", sl(ep("10.244.1.5", self, false)), sl(), []string{"10.244.1.5"}},
		{"slice deleted", sl(ep("10.244.1.5", self, true)), nil, []string{"10.244.1.5"}},
		{"moved to another node", sl(ep("10.244.1.5", self, true)), sl(ep("10.244.1.5", other, true)), []string{"10.244.1.5"}},
		{"not ready to ready", sl(ep("10.244.1.5", self, false)), sl(ep("10.244.1.5", self, true)), nil},
		{"not ready stays", sl(ep("10.244.1.5", self, false)), sl(ep("10.244.1.5", self, false)), nil},
		{"ready stays", sl(ep("10.244.1.5", self, true)), sl(ep("10.244.1.5", self, true)), nil},
		{"published: serving to not serving", sl(published("10.244.1.5", true)), sl(published("10.244.1.5", false)), []string{"10.244.1.5"}},
		{"published: not serving to serving", sl(published("10.244.1.5", false)), sl(published("10.244.1.5", true)), nil},
		{"published: not serving stays", sl(published("10.244.1.5", false)), sl(published("10.244.1.5", false)), nil},
		{"another node's pod goes", sl(ep("10.244.2.5", other, true)), sl(), nil},
		{"slice added", nil, sl(ep("10.244.1.5", self, true)), nil},
	} {
		got := localEndpointsLeft(self, c.before, c.now)
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if got := localEndpointsLeft(unique.Handle[string]{}, sl(ep("10.244.1.5", self, true)), nil); len(got) != 0 {
		t.Errorf("no node name: %v, want none", got)
	}
}

// TestLocalEndpointsReturned: which of this node's addresses a slice change
// hands to Reconciler.LocalReturned.
func TestLocalEndpointsReturned(t *testing.T) {
	self, other := unique.Make("win-1"), unique.Make("win-2")
	ep := func(ip string, node unique.Handle[string], serving bool) desired.Endpoint {
		return desired.Endpoint{Address: ip, Node: node, Ready: true, Serving: serving}
	}
	sl := func(eps ...desired.Endpoint) *desired.EndpointSlice { return &desired.EndpointSlice{Endpoints: eps} }
	for _, c := range []struct {
		name        string
		before, now *desired.EndpointSlice
		want        []string
	}{
		{"back to serving", sl(ep("10.244.1.5", self, false), ep("10.244.1.6", self, true)), sl(ep("10.244.1.5", self, true), ep("10.244.1.6", self, true)), []string{"10.244.1.5"}},
		{"serving stays", sl(ep("10.244.1.5", self, true)), sl(ep("10.244.1.5", self, true)), nil},
		{"stops serving", sl(ep("10.244.1.5", self, true)), sl(ep("10.244.1.5", self, false)), nil},
		{"not serving stays, ready as published", sl(ep("10.244.1.5", self, false)), sl(ep("10.244.1.5", self, false)), nil},
		{"another node's pod", sl(ep("10.244.2.5", other, false)), sl(ep("10.244.2.5", other, true)), nil},
		{"slice deleted", sl(ep("10.244.1.5", self, false)), nil, nil},
	} {
		if got := localEndpointsReturned(self, c.before, c.now); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
