package metrics

import (
	"net/http"
	"sync"

	"k8s.io/component-base/metrics/legacyregistry"
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

// Handler serves the registry in the Prometheus text format.
func Handler() http.Handler { return legacyregistry.Handler() }
