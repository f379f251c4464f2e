// Package metrics owns hnsproxy's Prometheus metrics and the metrics HTTP
// server. kube-proxy's metrics keep kube-proxy 1.37's exact names, labels,
// help texts and buckets (pkg/proxy/metrics), and 1.37's winkernel load
// balancer failure counters too, so dashboards and alerts made for
// kube-proxy keep working; hnsproxy's own metrics are prefixed hnsproxy_.
// Metrics are component-base metrics in the legacy registry, as kube-proxy's
// are, so the process, Go and feature-gate metrics come along too.
//
// One inherited wart: kubeproxy_sync_proxy_rules_no_local_endpoints_total is
// a gauge, which `promtool check metrics` flags for its _total suffix. The
// name is kept for compatibility; the promtool test allows exactly that one
// finding.
package metrics
