package proxier

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// serviceTally is one Service's share of the gauges every sync reports. It
// is taken when the Service is computed, so a sync costs in proportion to
// what changed rather than to the number of Services.
type serviceTally struct {
	truncated, mixedPortDropped int
	// noLocalInternal and noLocalExternal: a Local traffic policy and no local endpoint.
	noLocalInternal, noLocalExternal int
}

func (t *serviceTally) add(o serviceTally, sign int) {
	t.truncated += sign * o.truncated
	t.mixedPortDropped += sign * o.mixedPortDropped
	t.noLocalInternal += sign * o.noLocalInternal
	t.noLocalExternal += sign * o.noLocalExternal
}

// tallyOf is a Service's share of the gauges; ForService counts its
// ports without local endpoints as kube-proxy's
// sync_proxy_rules_no_local_endpoints_total does.
func tallyOf(res desired.ServiceResult) serviceTally {
	return serviceTally{
		truncated: res.Truncated, mixedPortDropped: res.MixedPortDropped,
		noLocalInternal: res.NoLocalInternal, noLocalExternal: res.NoLocalExternal,
	}
}

// tallies keeps every computed Service's tally and their sum. Only tallies
// other than zero are kept (most Services count nothing: at 10,000 Services
// a map of every one held 2 MB).
type tallies struct {
	per   map[types.NamespacedName]serviceTally
	total serviceTally
}

func newTallies() *tallies { return &tallies{per: map[types.NamespacedName]serviceTally{}} }

func (t *tallies) set(name types.NamespacedName, v serviceTally) {
	t.total.add(t.per[name], -1)
	if v == (serviceTally{}) {
		delete(t.per, name)
	} else {
		t.per[name] = v
	}
	t.total.add(v, 1)
}

func (t *tallies) remove(name types.NamespacedName) {
	t.total.add(t.per[name], -1)
	delete(t.per, name)
}

// noLocalEndpoints is SyncStats.NoLocalEndpoints.
func (t *tallies) noLocalEndpoints() map[string]int {
	return map[string]int{"internal": t.total.noLocalInternal, "external": t.total.noLocalExternal}
}
