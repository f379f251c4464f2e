package reconciler

import "k8s.io/klog/v2"

// What one drift repair finds drifted is said in one line at the default
// verbosity: a runbook's Get-HnsPolicyList | Remove-HnsPolicyList, or an
// HNS restart that drops what it held, makes every object of hnsproxy's
// drift at once, tens of thousands on a large node, and a line each buried
// the rest of the log. Each object's own line is at --v=2. What a Sync
// finds by itself (a backend a write met gone) is one object, logged as it
// is found.

// driftNamed is how many drifted load balancers, and endpoints, the
// repair's line names.
const driftNamed = 5

// driftKind is how an object drifted.
type driftKind int

const (
	driftLBGone driftKind = iota
	driftLBChanged
	driftEPGone
)

// driftTally is what one repair found drifted; nil outside a repair.
type driftTally struct {
	counts   [3]int
	lbs, eps []string // the first named
}

// found tallies an object, name, that drifted as kind, and returns the
// logger for its own line: --v=2 in a repair, log itself outside one.
func (t *driftTally) found(log klog.Logger, kind driftKind, name string) klog.Logger {
	if t == nil {
		return log
	}
	t.counts[kind]++
	named := &t.lbs
	if kind == driftEPGone {
		named = &t.eps
	}
	if len(*named) < driftNamed {
		*named = append(*named, name)
	}
	return log.V(2)
}

// log says what the repair found, if it found anything.
func (t *driftTally) log(log klog.Logger) {
	if t.counts == [3]int{} {
		return
	}
	log.Info("Drift repair found objects of hnsproxy's gone or changed in HNS; repairing them (each is logged at --v=2)",
		"loadBalancersGone", t.counts[driftLBGone], "loadBalancersChanged", t.counts[driftLBChanged],
		"remoteEndpointsGone", t.counts[driftEPGone], "firstLoadBalancers", t.lbs, "firstRemoteEndpoints", t.eps)
}
