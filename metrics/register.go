package metrics

import (
	"net/http"
	"sync"

	"k8s.io/component-base/featuregate"
	"k8s.io/component-base/metrics/legacyregistry"
	// As kube-proxy: client-go's metrics (rest_client_*, workqueue_*) join
	// the legacy registry at init. Not kubernetes_build_info: it carries a
	// Kubernetes release, and hnsproxy's version is none (BuildInfo).
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
)

var registerOnce sync.Once

// Register adds every hnsproxy and kube-proxy metric to the legacy
// registry. Until it runs, the metrics are no-ops (component-base metrics
// are lazy), so the daemon calls it first thing.
func Register() {
	registerOnce.Do(func() {
		for _, m := range kubeProxyMetrics {
			legacyregistry.MustRegister(m)
		}
		for _, m := range hnsProxyMetrics {
			legacyregistry.MustRegister(m)
		}
	})
}

// RegisterFeatureGates exports each gate's stage and state as
// kubernetes_feature_enabled, as kube-proxy does.
func RegisterFeatureGates(gates featuregate.FeatureGate) {
	if m, ok := gates.(interface{ AddMetrics() }); ok {
		m.AddMetrics()
	}
}

// Handler serves the registry in the Prometheus text format.
func Handler() http.Handler { return legacyregistry.Handler() }
