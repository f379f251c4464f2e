package app

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/healthcheck"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/internal/kubeip"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/proxier"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// StatusSource is the reconciler's per-object status as of its last Sync
// (reconciler.Reconciler has these), read without its lock: counts, kept
// as it goes, for every Sync's gauges; the snapshot only when a load
// balancer failed, since it covers every object.
type StatusSource interface {
	ObjectCounts() reconciler.ObjectCounts
	StatusSnapshot() *reconciler.StatusSnapshot
}

// observer turns the proxier's sync reports into kube-proxy's metrics, the
// healthz state and the per-service health checks.
type observer struct {
	families []v1.IPFamily                    // families the one sync loop serves; the first is primary
	health   *healthcheck.ProxyHealthServer   // nil when healthz is disabled
	services *healthcheck.ServiceHealthServer // nil when healthz is disabled
	statuses StatusSource                     // may be nil
	events   *events.Reporter                 // may be nil

	// rejected is what was reported of the load balancers HNS refuses
	// (rejections.go).
	rejected rejections
	// refusedBackends is what was reported of the backends left out
	// because HNS refuses their remote endpoints (refusedbackends.go).
	refusedBackends refusedBackends
}

var _ proxier.Observer = (*observer)(nil)

// newObserver reports for the families in clusterCIDRs (IPv4 when none are
// given). It is made for the sync loop about to run, so it tells health
// that the loop of each family started (kube-proxy's loop does the same).
func newObserver(clusterCIDRs []string, health *healthcheck.ProxyHealthServer, services *healthcheck.ServiceHealthServer, statuses StatusSource, reporter *events.Reporter) *observer {
	o := &observer{families: familiesOf(clusterCIDRs), health: health, services: services, statuses: statuses, events: reporter,
		rejected: newRejections(), refusedBackends: newRefusedBackends()}
	for _, f := range o.families {
		if health != nil {
			health.SyncLoopStarted(f)
		}
	}
	return o
}

func familiesOf(cidrs []string) []v1.IPFamily {
	var out []v1.IPFamily
	seen := map[v1.IPFamily]bool{}
	for _, c := range cidrs {
		f := v1.IPv4Protocol
		if p, ok := kubeip.ParsePrefix(c); ok && !p.Addr().Unmap().Is4() {
			f = v1.IPv6Protocol
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		out = []v1.IPFamily{v1.IPv4Protocol}
	}
	return out
}

func (o *observer) SyncQueued(at time.Time) {
	for _, f := range o.families {
		metrics.SyncProxyRulesLastQueuedTimestamp.WithLabelValues(string(f)).Set(float64(at.UnixNano()) / 1e9)
		if o.health != nil {
			o.health.QueuedUpdate(f)
		}
	}
}

// Changes counts a change as it arrives and sets what waits, as kube-proxy's
// change trackers do: a sync that runs long leaves the changes that came
// meanwhile pending, and the totals move while no sync ends.
func (o *observer) Changes(c proxier.Changes) {
	metrics.ServiceChangesTotal.Add(float64(c.Services))
	metrics.EndpointChangesTotal.Add(float64(c.Endpoints))
	metrics.ServiceChangesPending.Set(float64(c.PendingServices))
	metrics.EndpointChangesPending.Set(float64(c.PendingEndpoints))
}

func (o *observer) SyncDone(s proxier.SyncStats) {
	took := s.End.Sub(s.Start).Seconds()
	primary := string(o.families[0])
	split := metrics.SyncPartialProxyRulesLatency
	if s.Full {
		split = metrics.SyncFullProxyRulesLatency
	}
	synced := syncReachedHNS(s.Result)
	for _, f := range o.families {
		if o.health != nil {
			o.health.SyncRan(f)
		}
		metrics.SyncProxyRulesLatency.WithLabelValues(string(f)).Observe(took)
		split.WithLabelValues(string(f)).Observe(took)
		if synced {
			metrics.SyncProxyRulesLastTimestamp.WithLabelValues(string(f)).Set(float64(s.End.UnixNano()) / 1e9)
			if o.health != nil {
				o.health.Updated(f)
			}
		}
	}
	if s.Result.LearnedBackendCap > 0 {
		metrics.SetBackendCap(s.Result.LearnedBackendCap, metrics.BackendCapLearned)
	}
	for _, policy := range []string{"internal", "external"} {
		metrics.SyncProxyRulesNoLocalEndpointsTotal.WithLabelValues(policy, primary).Set(float64(s.NoLocalEndpoints[policy]))
	}
	// Programmed only if HNS took them: kube-proxy's Linux proxiers observe
	// after a successful restore alone.
	if synced {
		for family, ds := range s.ProgrammingLatency {
			label := o.familyLabel(family)
			for _, d := range ds {
				metrics.NetworkProgrammingLatency.WithLabelValues(label).Observe(d.Seconds())
			}
		}
	}
	metrics.BackendsTruncated.Set(float64(s.Truncated))
	metrics.EndpointsDroppedMixedPorts.Set(float64(s.MixedPortDropped))
	metrics.ForeignFrontendConflicts.Set(float64(len(s.Result.ForeignHeld)))
	for kind, n := range s.NodeCauseServices {
		eventType := v1.EventTypeNormal
		if kind.Warning {
			eventType = v1.EventTypeWarning
		}
		metrics.NodeCauseServices.WithLabelValues(kind.Reason, eventType).Set(float64(n))
	}
	if o.statuses != nil {
		setObjectGauges(o.statuses)
		if o.events != nil {
			o.reportRejections(s.Result)
			o.reportRefusedBackends(s.Result)
		}
	}
	if !synced {
		klog.V(2).InfoS("Sync could not reach HNS; healthz will turn unhealthy if this lasts", "failed", s.Result.Failed)
	}
}

// familyLabel is the ip_family label of what concerns family: its own, as
// each family's proxier of kube-proxy's dual-stack labels its metrics,
// where the loop reports that family; else the primary family's, which
// carries what the families the loop reports do not name.
func (o *observer) familyLabel(family intent.IPFamily) string {
	if f := v1.IPFamily(family.String()); slices.Contains(o.families, f) {
		return string(f)
	}
	return string(o.families[0])
}

// syncReachedHNS is false only when HNS was unreachable: every failure
// was, or none came because HNS, down since an earlier refusal, was
// called for nothing (kube-proxy's sync fails at its network lookup then).
// One object HNS rejects must not mark the whole node unhealthy (and drain
// it from cloud load balancers), but HNS being down must.
func syncReachedHNS(r reconciler.SyncResult) bool {
	if r.Created+r.Updated+r.Deleted > 0 {
		return true
	}
	for _, e := range r.Errors {
		if !hnslb.IsUnavailable(e.Err) {
			return true
		}
	}
	return len(r.Errors) == 0 && !r.HNSDown
}

// setObjectGauges sets the object gauges by kind and state: desired
// (wanted now), realized (HNS holds exactly that) and failed (last attempt
// errored).
func setObjectGauges(src StatusSource) {
	c := src.ObjectCounts()
	for kind, v := range map[string]reconciler.KindCounts{
		metrics.KindLoadBalancer:   c.LoadBalancers,
		metrics.KindRemoteEndpoint: c.RemoteEndpoints,
	} {
		metrics.Objects.WithLabelValues(kind, metrics.StateDesired).Set(float64(v.Desired))
		metrics.Objects.WithLabelValues(kind, metrics.StateRealized).Set(float64(v.Done))
		metrics.Objects.WithLabelValues(kind, metrics.StateFailed).Set(float64(v.Failed))
	}
}

// metricKinds are the metrics' kind labels of the reconciler's kinds.
var metricKinds = map[reconciler.ObjectKind]string{
	reconciler.KindLoadBalancer:   metrics.KindLoadBalancer,
	reconciler.KindRemoteEndpoint: metrics.KindRemoteEndpoint,
}

// driftRepaired counts an object the reconciler found drifted and puts back.
func driftRepaired(kind reconciler.ObjectKind) { countKind(metrics.DriftRepairsTotal, kind) }

// deleteKept counts an object HNS kept after reporting its delete done.
func deleteKept(kind reconciler.ObjectKind) { countKind(metrics.HNSDeletesKeptTotal, kind) }

func countKind(c *k8smetrics.CounterVec, kind reconciler.ObjectKind) {
	if k, ok := metricKinds[kind]; ok {
		c.WithLabelValues(k).Inc()
	}
}

func (o *observer) HealthChecks(checks map[types.NamespacedName]desired.HealthCheck) {
	if o.services == nil {
		return
	}
	ports := make(map[types.NamespacedName]uint16, len(checks))
	local := make(map[types.NamespacedName]healthcheck.LocalEndpoints, len(checks))
	for nsn, hc := range checks {
		if hc.NodePort != 0 {
			ports[nsn] = hc.NodePort
			local[nsn] = healthcheck.LocalEndpoints{IPv4: hc.LocalIPv4, IPv6: hc.LocalIPv6}
		}
	}
	_ = o.services.SyncServices(ports)
	_ = o.services.SyncEndpoints(local)
}

// foreignHeld reports the error of a load balancer whose frontend a foreign
// one holds: no refusal of HNS's, and reported by the proxier already.
func foreignHeld(err error) bool { return errors.As(err, new(*reconciler.ForeignFrontendError)) }

// stoppedMidSync reports the error of a call the stop cut short or kept
// from being made (the Sync's context ended): not HNS's refusal.
func stoppedMidSync(err error) bool { return errors.Is(err, context.Canceled) }

// splitOwner parses a load balancer owner, "namespace/name:port".
func splitOwner(owner string) (types.NamespacedName, string, bool) {
	colon := strings.LastIndexByte(owner, ':')
	slash := strings.IndexByte(owner, '/')
	if colon < 0 || slash < 0 || slash > colon {
		return types.NamespacedName{}, "", false
	}
	return types.NamespacedName{Namespace: owner[:slash], Name: owner[slash+1 : colon]}, owner[colon+1:], true
}
