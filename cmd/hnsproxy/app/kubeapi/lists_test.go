package kubeapi

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes/fake"
)

// TestListsLeaveOutWhatKubeProxyLeavesOut: the proxier's lists skip the
// Services another proxy implements and headless Services, and the slices
// of both, as kube-proxy's do. A fake clientset applies label selectors
// only, so the Services' field selector is evaluated here as the apiserver
// would (spec.clusterIP is one of a Service's selectable fields).
func TestListsLeaveOutWhatKubeProxyLeavesOut(t *testing.T) {
	other := map[string]string{LabelServiceProxyName: "other-proxy"}
	headless := map[string]string{v1.IsHeadlessService: ""}
	client := fake.NewClientset(
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: v1.ServiceSpec{ClusterIP: "10.96.0.10"}},
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "elsewhere", Labels: other}, Spec: v1.ServiceSpec{ClusterIP: "10.96.0.11"}},
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db"}, Spec: v1.ServiceSpec{ClusterIP: v1.ClusterIPNone}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "elsewhere-1", Labels: other}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db-1", Labels: headless}},
	)
	narrowServices, narrowSlices, err := ProxiedLists()
	if err != nil {
		t.Fatal(err)
	}
	var so, eo metav1.ListOptions
	narrowServices(&so)
	narrowSlices(&eo)
	ctx := context.Background()
	svcs, err := client.CoreV1().Services("").List(ctx, so)
	if err != nil {
		t.Fatal(err)
	}
	byField, err := fields.ParseSelector(so.FieldSelector)
	if err != nil {
		t.Fatalf("Services' field selector %q: %v", so.FieldSelector, err)
	}
	var served []string
	for _, svc := range svcs.Items {
		if byField.Matches(fields.Set{"spec.clusterIP": svc.Spec.ClusterIP}) {
			served = append(served, svc.Name)
		}
	}
	slices, err := client.DiscoveryV1().EndpointSlices("").List(ctx, eo)
	if err != nil {
		t.Fatal(err)
	}
	if len(served) != 1 || served[0] != "web" || len(slices.Items) != 1 || slices.Items[0].Name != "web-1" {
		t.Errorf("narrowed lists hold Services %v and %d slices (selectors %q, %q; %q), want web and web-1",
			served, len(slices.Items), so.LabelSelector, so.FieldSelector, eo.LabelSelector)
	}
}
