package events

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// kubectl describe service lists a Service's events by its UID, so the
// events raised by name alone must carry it once the proxier knows the
// Service; before that, and for a Service it does not know, they go out
// without one rather than not at all.
func TestServiceEventsCarryTheServiceUID(t *testing.T) {
	known := map[types.NamespacedName]types.UID{web: "5f0c7a56-0d0e-4c1e-9f57-7b1a3b8f2c11"}
	gone := types.NamespacedName{Namespace: "shop", Name: "gone"}
	early := types.NamespacedName{Namespace: "shop", Name: "early"}
	r, wait := recorded(t)

	r.LoadBalancerRejected(early, "http", "10.96.0.11:80/tcp", errors.New("refused before the proxier ran"))
	r.ResolveServiceUIDs(func(n types.NamespacedName) (types.UID, bool) { uid, ok := known[n]; return uid, ok })
	r.LoadBalancerRejected(web, "http", "10.96.0.10:80/tcp", errors.New("refused"))
	r.EndpointAddressRefused(gone, "http", "10.96.0.12:80/tcp", "10.244.1.5", errors.New("held"))
	// The health-check server raises its event through Recorder().
	r.Recorder().Eventf(ServiceRef(web), nil, "Warning", ReasonFailedToStartServiceHealthcheck, "Listen", "port taken")
	// A reference that carries a UID keeps it (audit E15).
	r.Recorder().Eventf(&v1.ObjectReference{Kind: "Service", Namespace: "shop", Name: "web", UID: "given"}, nil, "Warning", "BackendsTruncated", ActionSync, "given UID")

	want := map[string]types.UID{
		"early/" + ReasonLoadBalancerRejected:          "",
		"web/" + ReasonLoadBalancerRejected:            known[web],
		"gone/" + ReasonEndpointAddressRefused:         "",
		"web/" + ReasonFailedToStartServiceHealthcheck: known[web],
		"web/BackendsTruncated":                        "given",
	}
	for _, ev := range wait("shop", len(want)) {
		k := ev.Regarding.Name + "/" + ev.Reason
		uid, ok := want[k]
		if !ok {
			t.Errorf("unexpected event %s", k)
			continue
		}
		delete(want, k)
		if ev.Regarding.UID != uid {
			t.Errorf("%s regards UID %q, want %q", k, ev.Regarding.UID, uid)
		}
		if ev.Regarding.Kind != "Service" || ev.Regarding.Namespace != "shop" {
			t.Errorf("%s regards %+v", k, ev.Regarding)
		}
	}
	if len(want) != 0 {
		t.Errorf("missing events: %v", want)
	}
}
