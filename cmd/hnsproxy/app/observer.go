package app

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"

	"github.com/hnsproxy/hnsproxy/healthcheck"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/hnslb/reconciler"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/proxier"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// StatusSource lists the reconciler's per-object status (reconciler.Reconciler has these).
type StatusSource interface {
	Statuses() []reconciler.Status
	EndpointStatuses() []reconciler.EndpointStatus
}

// observer turns the proxier's sync reports into kube-proxy's metrics, the
// healthz state and the per-service health checks.
type observer struct {
	families []v1.IPFamily                    // families the one sync loop serves; the first is primary
	health   *healthcheck.ProxyHealthServer   // nil when healthz is disabled
	services *healthcheck.ServiceHealthServer // nil when healthz is disabled
	statuses StatusSource                     // may be nil
}

var _ proxier.Observer = (*observer)(nil)

// newObserver reports for the families in clusterCIDRs (IPv4 when none are given).
func newObserver(clusterCIDRs []string, health *healthcheck.ProxyHealthServer, services *healthcheck.ServiceHealthServer, statuses StatusSource) *observer {
	return &observer{families: familiesOf(clusterCIDRs), health: health, services: services, statuses: statuses}
}

func familiesOf(cidrs []string) []v1.IPFamily {
	var out []v1.IPFamily
	seen := map[v1.IPFamily]bool{}
	for _, c := range cidrs {
		f := v1.IPv4Protocol
		if netutils.IsIPv6CIDRString(c) {
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

func (o *observer) SyncDone(s proxier.SyncStats) {
	took := s.End.Sub(s.Start).Seconds()
	primary := string(o.families[0])
	split := metrics.SyncPartialProxyRulesLatency
	if s.Full {
		split = metrics.SyncFullProxyRulesLatency
	}
	synced := syncReachedHNS(s.Result)
	for _, f := range o.families {
		metrics.SyncProxyRulesLatency.WithLabelValues(string(f)).Observe(took)
		split.WithLabelValues(string(f)).Observe(took)
		if synced {
			metrics.SyncProxyRulesLastTimestamp.WithLabelValues(string(f)).Set(float64(s.End.UnixNano()) / 1e9)
			if o.health != nil {
				o.health.Updated(f)
			}
		}
	}
	metrics.ServiceChangesTotal.Add(float64(s.ServiceChanges))
	metrics.EndpointChangesTotal.Add(float64(s.EndpointChanges))
	// The sync consumed every queued change.
	metrics.ServiceChangesPending.Set(0)
	metrics.EndpointChangesPending.Set(0)
	for _, policy := range []string{"internal", "external"} {
		metrics.SyncProxyRulesNoLocalEndpointsTotal.WithLabelValues(policy, primary).Set(float64(s.NoLocalEndpoints[policy]))
	}
	for _, d := range s.ProgrammingLatency {
		metrics.NetworkProgrammingLatency.WithLabelValues(primary).Observe(d.Seconds())
	}
	metrics.BackendsTruncated.Set(float64(s.Truncated))
	metrics.EndpointsDroppedMixedPorts.Set(float64(s.MixedPortDropped))
	if o.statuses != nil {
		setObjectGauges(o.statuses)
	}
	if !synced {
		klog.V(2).InfoS("Sync could not reach HNS; healthz will turn unhealthy if this lasts", "failed", s.Result.Failed)
	}
}

// syncReachedHNS is false only when every failure was HNS being
// unreachable: one object HNS rejects must not mark the whole node unhealthy
// (and drain it from cloud load balancers), but HNS being down must.
func syncReachedHNS(r reconciler.SyncResult) bool {
	if len(r.Errors) == 0 {
		return true
	}
	for _, e := range r.Errors {
		if !hnslb.IsUnavailable(e.Err) {
			return true
		}
	}
	return r.Created+r.Updated+r.Deleted > 0
}

// setObjectGauges counts objects by kind and state: desired (wanted now),
// realized (HNS holds exactly that) and failed (last attempt errored).
func setObjectGauges(src StatusSource) {
	var lbDesired, lbDone, lbFailed float64
	for _, s := range src.Statuses() {
		if s.Desired != nil {
			lbDesired++
		}
		switch s.State {
		case reconciler.StateDone:
			lbDone++
		case reconciler.StateError:
			lbFailed++
		}
	}
	var epDesired, epDone, epFailed float64
	for _, s := range src.EndpointStatuses() {
		if s.Desired {
			epDesired++
		}
		switch s.State {
		case reconciler.StateDone:
			epDone++
		case reconciler.StateError:
			epFailed++
		}
	}
	for kind, v := range map[string][3]float64{
		metrics.KindLoadBalancer:   {lbDesired, lbDone, lbFailed},
		metrics.KindRemoteEndpoint: {epDesired, epDone, epFailed},
	} {
		metrics.Objects.WithLabelValues(kind, metrics.StateDesired).Set(v[0])
		metrics.Objects.WithLabelValues(kind, metrics.StateRealized).Set(v[1])
		metrics.Objects.WithLabelValues(kind, metrics.StateFailed).Set(v[2])
	}
}

func (o *observer) HealthChecks(checks map[types.NamespacedName]desired.HealthCheck) {
	if o.services == nil {
		return
	}
	ports := make(map[types.NamespacedName]uint16, len(checks))
	local := make(map[types.NamespacedName]int, len(checks))
	for nsn, hc := range checks {
		if hc.NodePort != 0 {
			ports[nsn] = hc.NodePort
			local[nsn] = hc.LocalEndpoints
		}
	}
	_ = o.services.SyncServices(ports)
	_ = o.services.SyncEndpoints(local)
}
