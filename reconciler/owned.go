package reconciler

import (
	"slices"
	"strings"

	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Owned is what a state file says hnsproxy owns in HNS, read by someone
// other than the reconciler (hnsproxy-diag) to tell hnsproxy's load
// balancers and remote endpoints from foreign ones.
type Owned struct {
	loadBalancers, remoteEndpoints map[string]struct{} // lower-cased IDs
	state                          *stateFile

	// Network is the ID of the HNS network the hnsproxy that wrote the
	// state file's snapshot used (each start writes one); "" when the file
	// does not say (written before it recorded networks, or missing).
	Network string

	// JournalDamage is what replaying the journal skipped (torn or corrupt
	// lines), nil when nothing was.
	JournalDamage error

	// NoState: there is no state file (hnsproxy never started on the node,
	// or the file was removed). TakesOver: hnsproxy's next start is a
	// takeover whatever its --takeover token (foreign.go): there is no
	// state or no snapshot, the journal is damaged, or a takeover's first
	// Sync never ended (TakeoverPending).
	NoState, TakesOver bool
}

// ReadOwned reads the state file at path and its journal as Start would,
// without writing either: safe while hnsproxy runs (a line it is appending
// may read as torn and is reported in JournalDamage). A missing file is an
// empty Owned.
func ReadOwned(path string) (*Owned, error) {
	s, err := loadStateFrom(osFS{}, path)
	if err != nil {
		return nil, err
	}
	o := &Owned{loadBalancers: foldedSet(s.ownedLBs()), remoteEndpoints: foldedSet(s.ownedEPs()), state: s, JournalDamage: s.journalStopped,
		NoState: s.fresh && !s.snapshotLost && s.journalStopped == nil, TakesOver: s.fresh || s.journalStopped != nil || s.TakeoverPending}
	if len(s.Networks) > 0 { // the network in use first (endpointNetworks)
		o.Network = s.Networks[0]
	}
	return o, nil
}

// KeptBackendCap is the backend cap the state file keeps for a start on
// osBuild with features, learning on (--max-backends-per-lb unset) or off:
// the cap HNS was found to enforce on this build, 0 when none is kept
// (Start's rule, backendcap.go).
func (o *Owned) KeptBackendCap(learn bool, osBuild hnslb.OSBuild, features hnslb.Features) int {
	if o.state == nil {
		return 0
	}
	kept, _ := keptBackendCap(o.state.LearnedBackendCap, learn, osBuild, features)
	return kept
}

// Claim adds to what o owns what hnsproxy claims as its own in lbs and
// eps, one listing of HNS's load balancers and of the network's endpoints:
// what creates the state file declared made, whose IDs never reached it (a
// reply lost, hnsproxy killed: Start claims them), and what failed creates
// it records left without port mappings (the next listing claims them).
// Read without it, those were another agent's, left alone, where hnsproxy
// adopts or deletes them. A load balancer without port mappings on a
// declared frontend and with no failure recorded is left out: Start
// claims it, a running hnsproxy does not (partial.go).
func (o *Owned) Claim(lbs []hnslb.LoadBalancer, eps []hnslb.Endpoint) {
	eps = slices.Clone(eps) // their addresses are read in canonical text, as Start reads them
	canonicalEndpoints(eps)
	shaped := slices.DeleteFunc(slices.Clone(lbs), func(lb hnslb.LoadBalancer) bool { _, ok := KeyOf(&lb); return !ok })
	claimInterrupted(klog.Logger{}, o.state, shaped, eps, o.loadBalancers, o.remoteEndpoints) // the zero logger says nothing
	left, _ := leftByFailedCreates(o.state.FailedLoadBalancerCreates, lbs)
	for _, doc := range left {
		o.loadBalancers[strings.ToLower(doc.ID)] = struct{}{}
	}
}

// LoadBalancer reports whether hnsproxy owns the load balancer with this ID.
func (o *Owned) LoadBalancer(id string) bool { return has(o.loadBalancers, strings.ToLower(id)) }

// RemoteEndpoint reports whether hnsproxy owns the endpoint with this ID
// (its remote endpoints, and on overlay the source VIP's and cluster IPs').
func (o *Owned) RemoteEndpoint(id string) bool { return has(o.remoteEndpoints, strings.ToLower(id)) }
