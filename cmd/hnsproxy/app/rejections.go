package app

import (
	"fmt"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// rejectionsRaisedPerCode bounds the HNSLoadBalancerRejected events on
// Services for one HNS error code while load balancers are refused with
// it. HNS that refuses every write (broken, not the Services) refuses one
// load balancer per Service port: one event each would be 10,000 events
// from a node of 10,000 Services, from every such node, written through
// the client hnsproxy shares with its informers (5 QPS by default). The
// events.k8s.io broadcaster of client-go has no spam filter to stop them,
// and kube-proxy raises no event for a load balancer HNS refuses. Past
// the bound one Warning on the Node stands for the rest.
const rejectionsRaisedPerCode = 10

// rejections is what the observer reported of the load balancers HNS
// refuses: the last error reported per load balancer key, so one HNS keeps
// refusing is one event, not one per retry; and per HNS error code, how
// many Services were told of it while load balancers are refused with it.
type rejections struct {
	reported map[string]rejection // by load balancer key
	raised   map[string]int       // by errorCode
}

// rejection is the reported error of one load balancer.
type rejection struct{ err, code string }

func newRejections() rejections {
	return rejections{reported: map[string]rejection{}, raised: map[string]int{}}
}

// errorCode is how rejections are grouped: HNS's code, or none.
func errorCode(err error) string {
	if code, ok := hnslb.CodeOf(err); ok {
		return fmt.Sprintf("0x%x", uint32(code))
	}
	return "no HNS code"
}

// reportRejections raises HNSLoadBalancerRejected on the owning Service for
// each load balancer HNS refused (not for HNS being unreachable, nor for a
// call the stop cut short, nor for a foreign load balancer on the frontend:
// the proxier raises ForeignLoadBalancerConflict for that), once per
// distinct error, and for at most rejectionsRaisedPerCode load balancers
// per HNS error code; the next one refused with that code raises one on
// the Node instead, and the rest none, until no load balancer is refused
// with the code. It reads the whole status only while some load balancer
// failed or was reported: the common Sync pays nothing for it.
func (o *observer) reportRejections(r reconciler.SyncResult) {
	rj := &o.rejected
	if len(r.Errors) == 0 && len(rj.reported) == 0 {
		return
	}
	owners := map[string]string{}
	for _, st := range o.statuses.StatusSnapshot().LoadBalancers {
		key := st.Key.String()
		owners[key] = st.Owner
		if st.State != reconciler.StateError {
			delete(rj.reported, key)
		}
	}
	refusing := map[string]bool{}
	for key, was := range rj.reported {
		if _, tracked := owners[key]; !tracked { // its Service was deleted
			delete(rj.reported, key)
			continue
		}
		refusing[was.code] = true
	}
	for code := range rj.raised {
		if !refusing[code] { // the streak of this code ended
			delete(rj.raised, code)
		}
	}
	for _, e := range r.Errors {
		if e.Kind != reconciler.KindLoadBalancer || hnslb.IsUnavailable(e.Err) || stoppedMidSync(e.Err) || foreignHeld(e.Err) || rj.reported[e.Name].err == e.Err.Error() {
			continue
		}
		svc, port, ok := splitOwner(owners[e.Name])
		if !ok {
			continue
		}
		code := errorCode(e.Err)
		rj.reported[e.Name] = rejection{err: e.Err.Error(), code: code}
		switch n := rj.raised[code]; {
		case n < rejectionsRaisedPerCode:
			o.events.LoadBalancerRejected(svc, port, e.Name, e.Err)
		case n == rejectionsRaisedPerCode:
			o.events.LoadBalancersRejected(code, n, svc, port, e.Name, e.Err)
		default:
			continue
		}
		rj.raised[code]++
	}
}
