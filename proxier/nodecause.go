package proxier

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// nodeCause is one problem whose cause is the node (desired.Problem's
// NodeCause): a node without a zone label gives every Service with zone
// hints the same problem. Raised on each Service, it is one Event object
// per Service and node (thousands at a start, client-go's broadcaster
// folding only the same event of one object), and the one fix, on the
// node, is said nowhere once. So it is raised once, on the Node.
type nodeCause struct {
	reason, cause string
	warning       bool
}

func causeOf(pr desired.Problem) nodeCause {
	return nodeCause{reason: pr.Reason, cause: pr.NodeCause, warning: pr.Warning}
}

// nodeCauses tracks which Services each node cause affects and which
// causes the Node has been told of: a cause is raised when it appears,
// again when its text changes (another key) or after it ended and came back.
type nodeCauses struct {
	of       map[types.NamespacedName][]nodeCause
	affected map[nodeCause]map[types.NamespacedName]bool
	raised   map[nodeCause]bool
	// counted are the kinds of cause this process has counted in
	// servicesByKind, each counted on at 0 once its causes end, so a
	// gauge set from the count drops to 0 instead of keeping its last value.
	counted map[NodeCauseKind]bool
}

func newNodeCauses() *nodeCauses {
	return &nodeCauses{
		of:       map[types.NamespacedName][]nodeCause{},
		affected: map[nodeCause]map[types.NamespacedName]bool{},
		raised:   map[nodeCause]bool{},
		counted:  map[NodeCauseKind]bool{},
	}
}

// NodeCauseKind is what a node cause is counted by: its event's reason and
// type, whatever its text.
type NodeCauseKind struct {
	Reason  string
	Warning bool
}

// servicesByKind counts the Services each kind of node cause affects now
// (a Service with two causes of one kind, overlay backends on other nodes
// and on no node in no remote subnet, counts once), and 0 for each kind
// counted before and now ended. Unlike the Node's event, raised once, it holds while the
// cause lasts: the lasting signal an alert can read.
func (c *nodeCauses) servicesByKind() map[NodeCauseKind]int {
	out := make(map[NodeCauseKind]int, len(c.counted))
	for k := range c.counted {
		out[k] = 0
	}
	var kinds []NodeCauseKind // one Service's, reused
	for _, causes := range c.of {
		kinds = kinds[:0]
		for _, k := range causes {
			kind := NodeCauseKind{Reason: k.reason, Warning: k.warning}
			if !slices.Contains(kinds, kind) {
				kinds = append(kinds, kind)
				out[kind]++
				c.counted[kind] = true
			}
		}
	}
	return out
}

// set records the node causes among name's problems and returns the
// Service's own problems, the ones to raise on it.
func (c *nodeCauses) set(name types.NamespacedName, problems []desired.Problem) []desired.Problem {
	c.forget(name)
	own := problems[:0:0]
	var causes []nodeCause
	for _, pr := range problems {
		if pr.NodeCause == "" {
			own = append(own, pr)
			continue
		}
		k := causeOf(pr)
		if slices.Contains(causes, k) {
			continue
		}
		causes = append(causes, k)
		if c.affected[k] == nil {
			c.affected[k] = map[types.NamespacedName]bool{}
		}
		c.affected[k][name] = true
	}
	if len(causes) > 0 {
		c.of[name] = causes
	}
	return own
}

// forget drops name, a Service gone or without a result.
func (c *nodeCauses) forget(name types.NamespacedName) {
	for _, k := range c.of[name] {
		delete(c.affected[k], name)
		if len(c.affected[k]) == 0 {
			delete(c.affected, k)
		}
	}
	delete(c.of, name)
}

// namedInCause is how many affected Services a Node event names.
const namedInCause = 3

// due returns the events to raise on the Node for causes not raised yet,
// sorted, and forgets the raised causes that ended, so that one coming
// back is raised again.
func (c *nodeCauses) due() []nodeCauseEvent {
	for k := range c.raised {
		if len(c.affected[k]) == 0 {
			delete(c.raised, k)
			klog.InfoS("Node-wide cause of Service problems ended", "reason", k.reason, "cause", k.cause)
		}
	}
	var out []nodeCauseEvent
	for k, names := range c.affected {
		if c.raised[k] {
			continue
		}
		c.raised[k] = true
		e := nodeCauseEvent{nodeCause: k, services: len(names)}
		for n := range names {
			e.named = append(e.named, n)
		}
		slices.SortFunc(e.named, func(a, b types.NamespacedName) int {
			return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
		})
		e.named = e.named[:min(len(e.named), namedInCause)]
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b nodeCauseEvent) int {
		return cmp.Or(cmp.Compare(a.reason, b.reason), cmp.Compare(a.cause, b.cause))
	})
	return out
}

// nodeCauseEvent is one Node event: the cause, how many Services it
// affects when raised, and the first few of them.
type nodeCauseEvent struct {
	nodeCause
	services int
	named    []types.NamespacedName
}

func (e nodeCauseEvent) note() string {
	names := make([]string, len(e.named))
	for i, n := range e.named {
		names[i] = n.String()
	}
	which := strings.Join(names, ", ")
	if more := e.services - len(e.named); more > 0 {
		which += fmt.Sprintf(" and %d more", more)
	}
	services := fmt.Sprintf("%d Services", e.services)
	if e.services == 1 {
		services = "1 Service"
	}
	return fmt.Sprintf("%s; it affects %s on this node (%s), which get no %s event of their own for it (hnsproxy-diag lists each)",
		e.cause, services, which, e.reason)
}

// reportNodeCauses raises on the Node each node-wide cause of Service
// problems that appeared or changed since the last sync. Causes of one
// reason share one event: client-go's events.k8s.io broadcaster folds a
// second event of the Node's with the same reason, type and action into a
// series of the first, whose note the API keeps, so a second note would
// be lost (ProviderAddressUnknown's backends on other nodes and on no
// node, say; an IPv6 cluster IP not served never comes with IPv6 node
// ports not served, which are looked at only where it is).
func (p *Proxier) reportNodeCauses() {
	due := p.nodeCauses.due()
	for i := 0; i < len(due); {
		e := due[i]
		notes := []string{e.note()}
		klog.InfoS("Node-wide cause of Service problems", "reason", e.reason, "cause", e.cause, "services", e.services)
		for i++; i < len(due) && due[i].reason == e.reason && due[i].warning == e.warning; i++ {
			notes = append(notes, due[i].note())
			klog.InfoS("Node-wide cause of Service problems", "reason", due[i].reason, "cause", due[i].cause, "services", due[i].services)
		}
		if p.opts.Recorder == nil {
			continue
		}
		eventType := v1.EventTypeNormal
		if e.warning {
			eventType = v1.EventTypeWarning
		}
		p.opts.Recorder.Eventf(hnsevents.NodeRef(p.opts.NodeName), nil, eventType, e.reason, hnsevents.ActionSync, "%s", strings.Join(notes, ". Also: "))
	}
}
