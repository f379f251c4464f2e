package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
)

// The metrics kube-proxy's dashboards and collectors chart beside its own:
// client-go's (rest_client_*), the feature gates, and the SLI endpoint.
func TestScrapeHasKubernetesComponentMetrics(t *testing.T) {
	Register()
	RegisterFeatureGates(testFeatureGates(t))
	touchAll()
	oneAPIRequest(t)

	base := startServer(t, NewServer(ServerOptions{ProxyMode: "kernelspace"}))
	code, body := get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		`rest_client_requests_total{code="200",host=`,
		`kubernetes_feature_enabled{name="HNSProxyTestGate",stage="BETA"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	runPromtool(t, body)
	if code, _ := get(t, base+"/metrics/slis"); code != http.StatusOK {
		t.Errorf("/metrics/slis = %d", code)
	}
}

// kube-prometheus's KubeVersionMismatch (kubernetes-mixin, system_alerts)
// counts the major.minor of kubernetes_build_info's git_version across
// every scraped job but kube-dns and coredns, and fires at more than one.
// hnsproxy is versioned apart from Kubernetes (v0.x): exported, its build
// info would keep that alert firing in every cluster that scrapes it. Its
// version is hnsproxy_build_info's instead (the hcloud cloud controller
// manager dropped kubernetes_build_info for the same alert).
func TestScrapeHasNoKubernetesBuildInfo(t *testing.T) {
	Register()
	base := startServer(t, NewServer(ServerOptions{ProxyMode: "kernelspace"}))
	_, body := get(t, base+"/metrics")
	if strings.Contains(body, "kubernetes_build_info") {
		t.Error("/metrics exports kubernetes_build_info: kube-prometheus's KubeVersionMismatch would count hnsproxy's version as a Kubernetes component's")
	}
}

// testFeatureGates is a gate set with one Beta gate, HNSProxyTestGate, on.
func testFeatureGates(t *testing.T) featuregate.FeatureGate {
	t.Helper()
	gates := featuregate.NewFeatureGate()
	if err := gates.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		"HNSProxyTestGate": {Default: true, PreRelease: featuregate.Beta},
	}); err != nil {
		t.Fatal(err)
	}
	return gates
}

// oneAPIRequest makes one apiserver request through client-go, so its
// request metrics have a sample.
func oneAPIRequest(t *testing.T) {
	t.Helper()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"NodeList","apiVersion":"v1","items":[]}`))
	}))
	defer api.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}
