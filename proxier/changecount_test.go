package proxier

import (
	"sync"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// changesObserver records what the proxier reports for the change metrics.
type changesObserver struct {
	recordingObserver
	mu      sync.Mutex
	changes []Changes
}

func (o *changesObserver) Changes(c Changes) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.changes = append(o.changes, c)
}

// endpoints sums the EndpointSlice changes reported and returns the last
// pending count.
func (o *changesObserver) endpoints() (total, pending int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range o.changes {
		total += c.Endpoints
	}
	if n := len(o.changes); n > 0 {
		pending = o.changes[n-1].PendingEndpoints
	}
	return total, pending
}

// kube-proxy v1.37's EndpointsChangeTracker takes only the EndpointSlices
// of its proxier's family: an FQDN slice, or one of a family the proxier
// does not serve (winkernel runs single-stack unless HNS supports IPv6
// dual stack on a network that is not overlay), is no change. It moves
// neither sync_proxy_rules_endpoint_changes_total nor _pending, and gives
// no programming latency. A slice of a served family counts.
func TestOnlySlicesOfServedFamiliesCountAsChanges(t *testing.T) {
	dualStack := hnslb.Features{IPv6DualStack: true}
	for _, c := range []struct {
		name       string
		cfg        desired.Config
		countsIPv6 bool
	}{
		{"HNS without IPv6 dual stack", desired.Config{Mode: desired.L2Bridge}, false},
		{"dual stack on l2bridge", desired.Config{Mode: desired.L2Bridge, Features: dualStack}, true},
		{"overlay", desired.Config{Mode: desired.Overlay, Features: dualStack}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
			obs := &changesObserver{}
			p := idleProxier(t, Options{Config: c.cfg, Observer: obs, Clock: clocktesting.NewFakeClock(start)})
			of := func(name string, typ discoveryv1.AddressType, addr, rv string) *cachedSlice {
				s := slice("web", endpoint{addr, "win-2"})
				s.Name, s.AddressType, s.ResourceVersion = name, typ, rv
				s.Annotations = map[string]string{triggerTimeAnnotation: start.Add(time.Second).Format(time.RFC3339Nano)}
				return cacheSlice(s)
			}
			// Added, updated, deleted and added again: four changes of
			// each slice.
			for _, s := range []struct {
				name string
				typ  discoveryv1.AddressType
				a, b string
			}{
				{"web-fqdn", discoveryv1.AddressTypeFQDN, "db.example.com", "db2.example.com"},
				{"web-v6", discoveryv1.AddressTypeIPv6, "fd00::7", "fd00::8"},
				{"web-v4", discoveryv1.AddressTypeIPv4, "10.244.2.7", "10.244.2.8"},
			} {
				before, after := of(s.name, s.typ, s.a, "1"), of(s.name, s.typ, s.b, "2")
				p.onSlice(before)
				p.onSliceUpdate(before, after)
				p.onSliceDelete(after)
				p.onSlice(of(s.name, s.typ, s.a, "3"))
			}
			want := 4 // the IPv4 slice's
			if c.countsIPv6 {
				want += 4
			}
			if total, pending := obs.endpoints(); total != want || pending != want {
				t.Errorf("endpoint changes reported: %d, pending %d; want %d and %d", total, pending, want, want)
			}
			taken := p.tracker.take()
			if taken.endpointChanges != want {
				t.Errorf("the sync took %d endpoint changes, want %d", taken.endpointChanges, want)
			}
			latencies := 0
			for _, ts := range taken.triggerTimes {
				latencies += len(ts)
			}
			// The last add's: the deletion took the add's and the update's
			// along (TestASliceDeletedBeforeTheSyncTakesItsUpdatesLatencyAlong).
			if wantLat := want / 4; latencies != wantLat {
				t.Errorf("%d programming latencies, want %d", latencies, wantLat)
			}

			// An FQDN slice is read by nothing: its Service is not
			// recomputed. One of a family not served is, uncounted: the
			// mapping reports its unusable endpoints.
			web := types.NamespacedName{Namespace: "default", Name: "web"}
			p.onSlice(of("web-fqdn", discoveryv1.AddressTypeFQDN, "db.example.com", "4"))
			if got := p.tracker.take(); len(got.services) != 0 {
				t.Errorf("an FQDN slice had %v recomputed", got.services)
			}
			p.onSlice(of("web-v6", discoveryv1.AddressTypeIPv6, "fd00::9", "3"))
			got := p.tracker.take()
			if _, ok := got.services[web]; !ok {
				t.Errorf("an IPv6 slice did not have %s recomputed", web)
			}
			if wantN := map[bool]int{true: 1}[c.countsIPv6]; got.endpointChanges != wantN {
				t.Errorf("an IPv6 slice counted %d endpoint changes, want %d", got.endpointChanges, wantN)
			}
		})
	}
}

// TestARelabelledSliceCountsOneEndpointChange: a slice moved from one
// Service to another (its kubernetes.io/service-name label changed) is one
// update of one slice, which kube-proxy v1.37's EndpointsChangeTracker
// counts once, for the Service it names now (endpoint_changes_total and
// _pending). hnsproxy recomputes the Service it left too, which lost its
// endpoints (kube-proxy keeps them there), but that is no second change
// to count: it counted two. One moved to no Service counts none, as
// kube-proxy drops a slice without the label before counting it.
func TestARelabelledSliceCountsOneEndpointChange(t *testing.T) {
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	obs := &changesObserver{}
	p := idleProxier(t, Options{Config: desired.Config{Mode: desired.L2Bridge}, Observer: obs, Clock: clocktesting.NewFakeClock(start)})
	of := func(svc, rv string) *cachedSlice {
		s := slice("web", endpoint{"10.244.2.7", "win-2"})
		s.Name, s.ResourceVersion = "hand-made", rv
		s.Labels = map[string]string{}
		if svc != "" {
			s.Labels[discoveryv1.LabelServiceName] = svc
		}
		s.Annotations = map[string]string{triggerTimeAnnotation: start.Add(time.Second).Format(time.RFC3339Nano)}
		return cacheSlice(s)
	}
	web, api := types.NamespacedName{Namespace: "default", Name: "web"}, types.NamespacedName{Namespace: "default", Name: "api"}
	onWeb := of("web", "1")
	p.onSlice(onWeb)
	p.tracker.take()
	obs.mu.Lock()
	obs.changes = nil
	obs.mu.Unlock()

	onAPI := of("api", "2")
	p.onSliceUpdate(onWeb, onAPI)
	if total, pending := obs.endpoints(); total != 1 || pending != 1 {
		t.Errorf("a slice moved from web to api: %d endpoint changes, %d pending; want 1 and 1", total, pending)
	}
	got := p.tracker.take()
	if _, ok := got.services[web]; !ok {
		t.Error("web, which lost the slice, is not recomputed")
	}
	if _, ok := got.services[api]; !ok {
		t.Error("api, which gained the slice, is not recomputed")
	}
	if got.endpointChanges != 1 || len(got.triggerTimes[api]) != 1 || len(got.triggerTimes[web]) != 0 {
		t.Errorf("the sync took %d endpoint changes, trigger times %v; want 1, api's", got.endpointChanges, got.triggerTimes)
	}

	obs.mu.Lock()
	obs.changes = nil
	obs.mu.Unlock()
	p.onSliceUpdate(onAPI, of("", "3"))
	if total, _ := obs.endpoints(); total != 0 {
		t.Errorf("a slice moved from api to no Service: %d endpoint changes, want none", total)
	}
	if got := p.tracker.take(); len(got.services) != 1 {
		t.Errorf("after a slice left api for no Service, %v recomputed; want api", got.services)
	}
}
