package reconciler

import (
	"strconv"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// What a declaration sent. A key's declaration (declareCreates) records
// the distribution of the create it is made for, so that a restart which
// claims a load balancer through it, with no baseline to judge it by,
// knows whether it was sent sticky: HNS may answer a sticky load balancer
// without its distribution (docs/simulator.md, echo drop-distribution),
// and the Service may have dropped affinity while hnsproxy was down. A key
// declared again for a create that sends another distribution (a standing
// key whose Service turned affinity on or off, a retry after the Service
// changed) is declared again with it, durably, before that create. A
// declaration without a record (an older hnsproxy's, or what kube-proxy
// made on a standing key after a rollback) says nothing of what was sent.
//
// In the state file the record is the declaration's: a "sentDistribution"
// field on a creating-lb journal record, and in a snapshot
// "creatingLoadBalancersSent", one entry for each of
// "creatingLoadBalancers" in the same order ("" for none). It is the
// distribution's number in decimal. An older hnsproxy ignores both and
// reads the declarations alone; its next snapshot drops the records.

// sentText is d as a declaration records it.
func sentText(d hnslb.Distribution) string { return strconv.FormatUint(uint64(d), 10) }

// parseSent reads a recorded distribution; ok is false for none or one
// that does not parse.
func parseSent(s string) (d hnslb.Distribution, ok bool) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return hnslb.Distribution(n), true
}

// sentOf is what the snapshot's declarations record, by key. Records that
// do not line up with the keys (a file edited by hand) are ignored.
func (s *stateFile) sentOf() map[intent.LBKey]string {
	out := map[intent.LBKey]string{}
	if len(s.CreatingLoadBalancersSent) != len(s.CreatingLoadBalancers) {
		return out
	}
	for i, k := range s.CreatingLoadBalancers {
		if _, ok := parseSent(s.CreatingLoadBalancersSent[i]); ok {
			out[k] = s.CreatingLoadBalancersSent[i]
		}
	}
	return out
}

// sentFor lists, for each of keys, what its declaration records.
func sentFor(keys []intent.LBKey, sent map[intent.LBKey]string) []string {
	var out []string
	for i, k := range keys {
		if d, ok := sent[k]; ok {
			if out == nil {
				out = make([]string, len(keys))
			}
			out[i] = d
		}
	}
	return out
}

// declareSent journals k's declaration with the distribution its create
// sends, unless the state file records that already. It reports whether
// it journaled one.
func (r *Reconciler) declareSent(k intent.LBKey, e *lbEntry) bool {
	d := sentText(e.desired.Distribution)
	if cur, ok := r.declaredSent[k]; ok && cur == d {
		return false
	}
	r.declaredSent[k] = d
	r.journal(journalRecord{Add: true, Kind: recordCreatingLB, Key: &k, SentDistribution: d})
	return true
}

// withdrawDeclaration journals the withdrawal of k's declaration and
// forgets what it recorded: the declaration and its record go together.
// allocated is journalRecord's.
func (r *Reconciler) withdrawDeclaration(k intent.LBKey, allocated bool) {
	delete(r.declaredSent, k)
	r.journal(journalRecord{Kind: recordCreatingLB, Key: &k, allocated: allocated})
}

// claimedSent sorts the load balancers Start claimed through a declaration
// (claimed: lower-case ID to key) with no baseline, by what their
// declaration records: sent sticky, they are judged as sticky
// (sentSticky); sent without affinity, as listed; without a record, as
// possibly sticky (sentUnknown, baseline.go).
func (r *Reconciler) claimedSent(claimed map[string]intent.LBKey, sent map[intent.LBKey]string) {
	for id, k := range claimed {
		if _, ok := r.sentUnknown[id]; !ok {
			continue // it has a baseline
		}
		d, ok := parseSent(sent[k])
		if !ok {
			continue
		}
		delete(r.sentUnknown, id)
		if d != hnslb.DistributionNone {
			r.sentSticky[id] = d
		}
	}
}

// unansweredSent is, for a load balancer Start claimed without a
// baseline, the distribution it may have been sent with where its listing
// answers none, and whether it is judged so (baseline.go,
// distributionUnanswered): where its declaration records a sticky create,
// on every build, replaced where HNS cannot modify; without a record,
// only where HNS modifies, as SourceIP (the only one a Service's affinity
// asks for), since a replacement would cut the frontend of every load
// balancer Start claims without one, kube-proxy's on every standing key
// after a rollback among them.
func (r *Reconciler) unansweredSent(id string) (d hnslb.Distribution, judged bool) {
	id = strings.ToLower(id)
	if d, ok := r.sentSticky[id]; ok {
		return d, true
	}
	return hnslb.DistributionSourceIP, r.modifyOn() && has(r.sentUnknown, id)
}
