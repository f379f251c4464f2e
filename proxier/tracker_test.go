package proxier

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/hnsproxy/hnsproxy/intent"
)

// The tracker reports each change as it arrives and the take that empties
// it, with what then waits: Services (as kube-proxy's service change
// tracker counts them, each once however often it changed) and
// EndpointSlice changes.
func TestTrackerReportsEachChangeAndTheTake(t *testing.T) {
	var got []Changes
	tr := newChangeTracker(time.Unix(0, 0), func(c Changes) { got = append(got, c) })
	web := types.NamespacedName{Namespace: "shop", Name: "web"}
	db := types.NamespacedName{Namespace: "shop", Name: "db"}
	tr.serviceChanged(web)
	tr.serviceChanged(web)
	tr.sliceChanged(web, intent.IPv4, time.Time{})
	tr.serviceChanged(db)
	want := []Changes{
		{Services: 1, PendingServices: 1},
		{Services: 1, PendingServices: 1},
		{Endpoints: 1, PendingServices: 1, PendingEndpoints: 1},
		{Services: 1, PendingServices: 2, PendingEndpoints: 1},
	}
	check := func() {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("reports = %+v, want %+v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("report %d = %+v, want %+v", i, got[i], want[i])
			}
		}
	}
	check()
	tr.take()
	tr.serviceChanged(web)
	want = append(want, Changes{}, Changes{Services: 1, PendingServices: 1})
	check()
}

// pending reports what waits for the next sync: the Services to recompute
// (also those a change no metric counts marked, noteSlice) and the
// EndpointSlice changes counted.
func (t *changeTracker) pending() (services, endpoints int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.services), t.endpointChanges
}
