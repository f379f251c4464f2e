package proxier

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

func TestTallyOfTrafficPolicies(t *testing.T) {
	remoteOnly := desired.ServiceResult{LBs: []intent.LB{{Backends: []intent.Backend{{IP: "10.244.2.7"}}}}}
	withLocal := desired.ServiceResult{LBs: []intent.LB{{Backends: []intent.Backend{{IP: "10.244.2.7"}, {IP: "10.244.1.5", Local: true}}}}}
	itpLocal := func(s *v1.Service) { s.Spec.InternalTrafficPolicy = ptr.To(v1.ServiceInternalTrafficPolicyLocal) }
	etpLocal := func(s *v1.Service) {
		s.Spec.Type = v1.ServiceTypeNodePort
		s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
	}
	for _, tc := range []struct {
		name string
		svc  *v1.Service
		res  desired.ServiceResult
		want serviceTally
	}{
		{"cluster policies", service("a", "10.96.0.1"), remoteOnly, serviceTally{}},
		{"ITP=Local without local endpoint", service("a", "10.96.0.1", itpLocal), remoteOnly, serviceTally{noLocalInternal: 1}},
		{"ITP=Local with a local endpoint", service("a", "10.96.0.1", itpLocal), withLocal, serviceTally{}},
		{"ETP=Local NodePort without local endpoint", service("a", "10.96.0.1", etpLocal), remoteOnly, serviceTally{noLocalExternal: 1}},
		{"ETP=Local ignored on ClusterIP", service("a", "10.96.0.1", func(s *v1.Service) {
			s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
		}), remoteOnly, serviceTally{}},
		{"truncation and dropped ports carried", service("a", "10.96.0.1"),
			desired.ServiceResult{Truncated: 3, MixedPortDropped: 2}, serviceTally{truncated: 3, mixedPortDropped: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tallyOf(tc.svc, tc.res); got != tc.want {
				t.Errorf("tallyOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestTalliesSumReplaceAndRemove(t *testing.T) {
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	ts := newTallies()
	ts.set(a, serviceTally{truncated: 2, noLocalInternal: 1})
	ts.set(b, serviceTally{truncated: 5, mixedPortDropped: 1, noLocalExternal: 1})
	if want := (serviceTally{truncated: 7, mixedPortDropped: 1, noLocalInternal: 1, noLocalExternal: 1}); ts.total != want {
		t.Fatalf("total after two sets = %+v, want %+v", ts.total, want)
	}
	ts.set(a, serviceTally{truncated: 1}) // recomputed: replaces, never adds twice
	ts.remove(b)
	ts.remove(b) // removing an unknown Service changes nothing
	if want := (serviceTally{truncated: 1}); ts.total != want {
		t.Fatalf("total after replace and remove = %+v, want %+v", ts.total, want)
	}
	if got, want := ts.noLocalEndpoints(), map[string]int{"internal": 0, "external": 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("noLocalEndpoints = %v, want %v", got, want)
	}
	ts.set(b, serviceTally{})
	ts.set(a, serviceTally{}) // counts nothing now: nothing is kept of it
	if ts.total != (serviceTally{}) || len(ts.per) != 0 {
		t.Errorf("after zero tallies: total %+v, %d kept; want zero and none", ts.total, len(ts.per))
	}
}
