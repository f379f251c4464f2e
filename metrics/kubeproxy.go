package metrics

import (
	"k8s.io/component-base/metrics"
)

const kubeProxySubsystem = "kubeproxy"

// kube-proxy's sync buckets: 1ms doubling to ~16s.
var syncBuckets = metrics.ExponentialBuckets(0.001, 2, 15)

var (
	// SyncProxyRulesLatency is the duration of one sync (full or partial), by ip_family.
	SyncProxyRulesLatency = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem: kubeProxySubsystem, Name: "sync_proxy_rules_duration_seconds",
		Help: "SyncProxyRules latency in seconds", Buckets: syncBuckets, StabilityLevel: metrics.ALPHA,
	}, []string{"ip_family"})

	// SyncFullProxyRulesLatency is the duration of full syncs, those that
	// recompute every Service: the first, and those after a change of what
	// the desired state reads of this Node (addresses, zone) or of the
	// node's configuration. Neither a Node status heartbeat, drift repair
	// nor the periodic sync is one.
	SyncFullProxyRulesLatency = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem: kubeProxySubsystem, Name: "sync_full_proxy_rules_duration_seconds",
		Help: "SyncProxyRules latency in seconds for full resyncs", Buckets: syncBuckets, StabilityLevel: metrics.ALPHA,
	}, []string{"ip_family"})

	// SyncPartialProxyRulesLatency is the duration of incremental syncs.
	SyncPartialProxyRulesLatency = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem: kubeProxySubsystem, Name: "sync_partial_proxy_rules_duration_seconds",
		Help: "SyncProxyRules latency in seconds for partial resyncs", Buckets: syncBuckets, StabilityLevel: metrics.ALPHA,
	}, []string{"ip_family"})

	// SyncProxyRulesLastTimestamp is when HNS was last synced successfully.
	SyncProxyRulesLastTimestamp = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem: kubeProxySubsystem, Name: "sync_proxy_rules_last_timestamp_seconds",
		Help: "The last time proxy rules were successfully synced", StabilityLevel: metrics.ALPHA,
	}, []string{"ip_family"})

	// SyncProxyRulesLastQueuedTimestamp is when a sync was last requested.
	SyncProxyRulesLastQueuedTimestamp = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem: kubeProxySubsystem, Name: "sync_proxy_rules_last_queued_timestamp_seconds",
		Help: "The last time a sync of proxy rules was queued", StabilityLevel: metrics.ALPHA,
	}, []string{"ip_family"})

	// NetworkProgrammingLatency runs from an EndpointSlice's
	// endpoints.kubernetes.io/last-change-trigger-time to HNS programmed
	// (upstream's Windows proxy registers it but never observes it).
	NetworkProgrammingLatency = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem: kubeProxySubsystem, Name: "network_programming_duration_seconds",
		Help: "In Cluster Network Programming Latency in seconds",
		Buckets: metrics.MergeBuckets(
			metrics.LinearBuckets(0.25, 0.25, 2), // 0.25s, 0.5s
			metrics.LinearBuckets(1, 1, 59),      // 1s .. 59s
			metrics.LinearBuckets(60, 5, 12),     // 60s .. 115s
			metrics.LinearBuckets(120, 30, 7),    // 2min .. 5min
		),
		StabilityLevel: metrics.ALPHA,
	}, []string{"ip_family"})

	// EndpointChangesPending is EndpointSlice changes not yet synced.
	EndpointChangesPending = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem: kubeProxySubsystem, Name: "sync_proxy_rules_endpoint_changes_pending",
		Help: "Pending proxy rules Endpoint changes", StabilityLevel: metrics.ALPHA,
	})

	// EndpointChangesTotal is every EndpointSlice change seen.
	EndpointChangesTotal = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem: kubeProxySubsystem, Name: "sync_proxy_rules_endpoint_changes_total",
		Help: "Cumulative proxy rules Endpoint changes", StabilityLevel: metrics.ALPHA,
	})

	// ServiceChangesPending is Service changes not yet synced.
	ServiceChangesPending = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem: kubeProxySubsystem, Name: "sync_proxy_rules_service_changes_pending",
		Help: "Pending proxy rules Service changes", StabilityLevel: metrics.ALPHA,
	})

	// ServiceChangesTotal is every Service change seen.
	ServiceChangesTotal = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem: kubeProxySubsystem, Name: "sync_proxy_rules_service_changes_total",
		Help: "Cumulative proxy rules Service changes", StabilityLevel: metrics.ALPHA,
	})

	// ProxyHealthzTotal counts /healthz answers by HTTP code.
	ProxyHealthzTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: kubeProxySubsystem, Name: "proxy_healthz_total",
		Help: "Cumulative proxy healthz HTTP status", StabilityLevel: metrics.ALPHA,
	}, []string{"code"})

	// ProxyLivezTotal counts /livez answers by HTTP code.
	ProxyLivezTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: kubeProxySubsystem, Name: "proxy_livez_total",
		Help: "Cumulative proxy livez HTTP status", StabilityLevel: metrics.ALPHA,
	}, []string{"code"})

	// SyncProxyRulesNoLocalEndpointsTotal is the number of services with a
	// Local traffic policy ("internal" or "external") and no local endpoints.
	// A gauge despite its name, as in kube-proxy.
	SyncProxyRulesNoLocalEndpointsTotal = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem: kubeProxySubsystem, Name: "sync_proxy_rules_no_local_endpoints_total",
		Help: "Number of services with a Local traffic policy and no endpoints", StabilityLevel: metrics.ALPHA,
	}, []string{"traffic_policy", "ip_family"})
)

// kubeProxyMetrics are the kube-proxy metrics hnsproxy registers: kube-proxy's
// common set, the full/partial split, which only its iptables and nftables
// modes register but which an incremental proxy has too, and the load
// balancer failure counters kube-proxy 1.37's winkernel registers.
var kubeProxyMetrics = []metrics.Registerable{
	SyncProxyRulesLatency, SyncFullProxyRulesLatency, SyncPartialProxyRulesLatency,
	SyncProxyRulesLastTimestamp, SyncProxyRulesLastQueuedTimestamp, NetworkProgrammingLatency,
	EndpointChangesPending, EndpointChangesTotal, ServiceChangesPending, ServiceChangesTotal,
	ProxyHealthzTotal, ProxyLivezTotal, SyncProxyRulesNoLocalEndpointsTotal,
	WinKernelLBCreateFailure, WinKernelLBUpdateFailure, WinKernelLBDeleteFailure,
}
