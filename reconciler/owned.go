package reconciler

import "strings"

// Owned is what a state file says hnsproxy owns in HNS, read by someone
// other than the reconciler (hnsproxy-diag) to tell hnsproxy's load
// balancers and remote endpoints from foreign ones.
type Owned struct {
	loadBalancers, remoteEndpoints map[string]bool // lower-cased IDs

	// Network is the ID of the HNS network the hnsproxy that wrote the
	// state file's snapshot used (each start writes one); "" when the file
	// does not say (written before it recorded networks, or missing).
	Network string

	// JournalDamage is what replaying the journal skipped (torn or corrupt
	// lines), nil when nothing was.
	JournalDamage error
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
	o := &Owned{loadBalancers: lowerSet(s.ownedLBs()), remoteEndpoints: lowerSet(s.ownedEPs()), JournalDamage: s.journalStopped}
	if len(s.Networks) > 0 { // the network in use first (endpointNetworks)
		o.Network = s.Networks[0]
	}
	return o, nil
}

// LoadBalancer reports whether hnsproxy owns the load balancer with this ID.
func (o *Owned) LoadBalancer(id string) bool { return o.loadBalancers[strings.ToLower(id)] }

// RemoteEndpoint reports whether hnsproxy owns the endpoint with this ID
// (its remote endpoints, and on overlay the source VIP's and cluster IPs').
func (o *Owned) RemoteEndpoint(id string) bool { return o.remoteEndpoints[strings.ToLower(id)] }

func lowerSet(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[strings.ToLower(id)] = true
	}
	return m
}
