package metrics

import (
	"k8s.io/component-base/metrics"
)

const namespace = "hnsproxy"

// Label values of Objects' state.
const (
	StateDesired  = "desired"
	StateRealized = "realized"
	StateFailed   = "failed"
)

// Label values of the kind of Objects, DriftRepairsTotal and
// HNSDeletesKeptTotal.
const (
	KindLoadBalancer   = "loadbalancer"
	KindRemoteEndpoint = "remote_endpoint"
)

var (
	// HNSOperationsTotal counts HNS calls by operation and result (see resultOf).
	HNSOperationsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Name: "hns_operations_total",
		Help: "HNS calls by operation and result", StabilityLevel: metrics.ALPHA,
	}, []string{"operation", "result"})

	// HNSOperationDuration is how long HNS calls take, by operation.
	HNSOperationDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace: namespace, Name: "hns_operation_duration_seconds",
		Help:           "HNS call latency in seconds",
		Buckets:        metrics.ExponentialBuckets(0.0005, 2, 16), // 0.5ms .. ~16s
		StabilityLevel: metrics.ALPHA,
	}, []string{"operation"})

	// Objects is how many HNS objects of a kind are desired, realized
	// (programmed and matching) and failed (last attempt errored).
	Objects = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: namespace, Name: "objects",
		Help: "HNS objects hnsproxy manages, by kind and state (desired, realized, failed)", StabilityLevel: metrics.ALPHA,
	}, []string{"kind", "state"})

	// DriftRepairsTotal counts hnsproxy's objects found changed or gone in
	// HNS behind its back (by a drift repair, or by a modify that met the
	// load balancer gone) and put back, by kind.
	DriftRepairsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Name: "drift_repairs_total",
		Help: "HNS objects found changed or missing behind hnsproxy's back and repaired", StabilityLevel: metrics.ALPHA,
	}, []string{"kind"})

	// HNSDeletesKeptTotal counts hnsproxy's objects a drift repair still
	// listed after HNS reported their delete done, by kind; each is deleted
	// again.
	HNSDeletesKeptTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Name: "hns_deletes_kept_total",
		Help: "hnsproxy's HNS objects still listed after HNS reported their delete done, deleted again", StabilityLevel: metrics.ALPHA,
	}, []string{"kind"})

	// BackendsTruncated is how many ready backends are currently left out of
	// load balancers because of the per-load-balancer backend cap.
	BackendsTruncated = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace: namespace, Name: "backends_truncated",
		Help: "Backends currently left out of HNS load balancers by the per-load-balancer backend cap", StabilityLevel: metrics.ALPHA,
	})

	// ForeignFrontendConflicts is how many desired frontends a load balancer
	// hnsproxy does not own holds, and hnsproxy will not delete.
	ForeignFrontendConflicts = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace: namespace, Name: "foreign_frontend_conflicts",
		Help: "Desired load-balancer frontends held by an HNS load balancer hnsproxy does not own and may not delete", StabilityLevel: metrics.ALPHA,
	})

	// EndpointsDroppedMixedPorts is how many endpoints are currently left
	// out because a named target port resolved to a different port than the
	// load balancer's single internal port.
	EndpointsDroppedMixedPorts = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace: namespace, Name: "endpoints_dropped_mixed_ports",
		Help: "Endpoints currently left out because their named target port differs from the load balancer's internal port", StabilityLevel: metrics.ALPHA,
	})

	// NodeCauseServices counts the Services a problem whose cause is the
	// node affects, by the problem's event reason and type (Warning,
	// Normal). The Node's event is raised once and expires with the
	// apiserver's event TTL; this holds while the cause lasts, and is 0
	// once it ended.
	NodeCauseServices = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: namespace, Name: "node_cause_services",
		Help:           "Services affected by a problem whose cause is this node, by the event reason and type raised on the Node for it",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason", "type"})

	// ConfigFileRejected is 1 while the --config file holds content a
	// restart would refuse, which hnsproxy reports once as a Node Warning
	// and does not obey; 0 otherwise. The event expires with the
	// apiserver's event TTL; every restart of the node meets the file.
	ConfigFileRejected = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace: namespace, Name: "config_file_rejected",
		Help:           "1 while the --config file holds a configuration hnsproxy would not start with (it runs on with the one it started with), else 0",
		StabilityLevel: metrics.ALPHA,
	})

	// HNSFeatureEnabled says which HNS capabilities are in use (1) or not (0).
	HNSFeatureEnabled = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: namespace, Name: "hns_feature_enabled",
		Help: "HNS capabilities hnsproxy uses (1) or not (0), from the HNS version and configuration", StabilityLevel: metrics.ALPHA,
	}, []string{"feature"})

	// StateFileWriteFailuresTotal counts failed writes of the state file
	// (snapshot or journal): while they fail, ownership of new objects is
	// only in memory.
	StateFileWriteFailuresTotal = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: namespace, Name: "state_file_write_failures_total",
		Help: "Failed writes of the state file that records which HNS objects hnsproxy owns", StabilityLevel: metrics.ALPHA,
	})

	// StateFileSyncDuration is how long each fsync of the state file takes
	// (a declaration before a create, a withdrawal's, a snapshot's): the
	// part of a change that waits on the node's disk.
	StateFileSyncDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Namespace: namespace, Name: "state_file_sync_duration_seconds",
		Help:           "Duration of each fsync of the state file that records which HNS objects hnsproxy owns",
		Buckets:        metrics.ExponentialBuckets(0.0001, 2, 16), // 0.1ms .. ~3.3s
		StabilityLevel: metrics.ALPHA,
	})

	// HNSCallTimeoutsTotal counts HNS calls abandoned at their deadline,
	// by operation (hns_operations_total's names). Such a call still runs
	// (hcn calls cannot be cancelled); its object is retried once it returns.
	HNSCallTimeoutsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Name: "hns_call_timeouts_total",
		Help: "HNS calls abandoned at their deadline, by operation", StabilityLevel: metrics.ALPHA,
	}, []string{"operation"})

	// OSBugWorkaround lists the known OS bugs of this node's Windows build
	// that can hurt its traffic: 1 while hnsproxy works around one, 0 when
	// --os-bug-workarounds=none leaves it.
	OSBugWorkaround = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: namespace, Name: "os_bug_workaround",
		Help: "Known Windows dataplane bugs of this node's build: worked around (1) or left as the operator chose (0)", StabilityLevel: metrics.ALPHA,
	}, []string{"bug"})

	// BackendCap is the per-load-balancer backend cap in force, labelled by
	// where it comes from: os-build, hns-version, flag, or learned (HNS
	// refused more with 0x57 and took 64).
	BackendCap = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: namespace, Name: "backend_cap",
		Help: "Backends per HNS load balancer hnsproxy programs at most, by the source of that cap", StabilityLevel: metrics.ALPHA,
	}, []string{"source"})

	// BuildInfo carries hnsproxy's version (--version's) as a label; the
	// value is always 1. It stands in for kubernetes_build_info, which
	// kube-prometheus's KubeVersionMismatch reads as a Kubernetes release.
	BuildInfo = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help: "The hnsproxy version this process runs (value always 1)", StabilityLevel: metrics.ALPHA,
	}, []string{"version"})

	// HNSInfo carries the HNS version as a label; the value is always 1.
	HNSInfo = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: namespace, Name: "hns_info",
		Help: "The HNS version this node reports (value always 1)", StabilityLevel: metrics.ALPHA,
	}, []string{"version"})
)

var hnsProxyMetrics = []metrics.Registerable{
	HNSOperationsTotal, HNSOperationDuration, Objects, DriftRepairsTotal, HNSDeletesKeptTotal,
	BackendsTruncated, EndpointsDroppedMixedPorts, HNSFeatureEnabled, HNSInfo,
	StateFileWriteFailuresTotal, StateFileSyncDuration, ForeignFrontendConflicts, HNSCallTimeoutsTotal,
	OSBugWorkaround, BackendCap, BuildInfo, NodeCauseServices, ConfigFileRejected,
}

// Sources of BackendCap.
const (
	BackendCapFromOSBuild    = "os-build"
	BackendCapFromHNSVersion = "hns-version"
	BackendCapFromFlag       = "flag"
	BackendCapLearned        = "learned"
)

// SetBackendCap records the cap in force and its only source.
func SetBackendCap(limit int, source string) {
	BackendCap.Reset()
	BackendCap.WithLabelValues(source).Set(float64(limit))
}
