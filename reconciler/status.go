package reconciler

import (
	"fmt"
	"time"

	"github.com/hnsproxy/hnsproxy/intent"
)

// State of one object's convergence.
type State string

const (
	// StatePending: not yet converged (new, changed, or waiting for a
	// backend it cannot resolve yet).
	StatePending State = "pending"
	// StateDone: HNS holds exactly what is desired.
	StateDone State = "done"
	// StateError: the last attempt failed; it is retried at NextRetry.
	StateError State = "error"
)

// objStatus is the convergence status every tracked object carries.
type objStatus struct {
	state     State
	lastErr   error
	attempts  int // consecutive unsuccessful attempts
	nextRetry time.Time
}

func (s *objStatus) errString() string {
	if s.lastErr == nil {
		return ""
	}
	return s.lastErr.Error()
}

// Status is one load balancer's convergence status, for the debug endpoint.
type Status struct {
	Key   intent.LBKey `json:"key"`
	Owner string       `json:"owner,omitempty"`
	// Desired is nil while a removed load balancer waits for its deletion.
	Desired    *intent.LB `json:"desired,omitempty"`
	RealizedID string     `json:"realizedID,omitempty"`
	State      State      `json:"state"`
	LastError  string     `json:"lastError,omitempty"`
	Attempts   int        `json:"attempts,omitempty"`
	NextRetry  time.Time  `json:"nextRetry,omitzero"`
	// MissingBackends are backend IPs left out of the realized load
	// balancer because no HNS endpoint for them is known yet.
	MissingBackends []string `json:"missingBackends,omitempty"`
}

// EndpointStatus is one remote endpoint's convergence status. Desired false
// means it waits for its deletion, or, with ShadowedBy, that HNS should not
// hold it while that local endpoint holds its address (nodeunknown.go).
type EndpointStatus struct {
	Endpoint   intent.RemoteEndpoint `json:"endpoint"`
	Desired    bool                  `json:"desired"`
	ShadowedBy string                `json:"shadowedBy,omitempty"`
	// RealizedUsers counts the realized load balancers using it in HNS; it
	// is deleted only once none does.
	RealizedUsers int       `json:"realizedUsers,omitempty"`
	RealizedID    string    `json:"realizedID,omitempty"`
	State         State     `json:"state"`
	LastError     string    `json:"lastError,omitempty"`
	Attempts      int       `json:"attempts,omitempty"`
	NextRetry     time.Time `json:"nextRetry,omitzero"`
}

// ObjectKind names what an ObjectError is about.
type ObjectKind string

const (
	KindLoadBalancer   ObjectKind = "LoadBalancer"
	KindRemoteEndpoint ObjectKind = "RemoteEndpoint"
	// KindStale is an object being removed that no desired object stands
	// for: one of ours left over, or a foreign one blocking a frontend.
	KindStale ObjectKind = "Stale"
)

// ObjectError is one object's failure in a Sync.
type ObjectError struct {
	Kind ObjectKind
	// Name is the load balancer key, the remote endpoint IP, or the HNS ID
	// of a stale object.
	Name string
	Err  error
}

func (e ObjectError) Error() string { return fmt.Sprintf("%s %s: %v", e.Kind, e.Name, e.Err) }
func (e ObjectError) Unwrap() error { return e.Err }

// SyncResult counts what one Sync did. Created, Updated and Deleted count
// objects (an update done as delete + create counts once, as Updated).
// Failed counts objects whose attempt failed in this Sync; Pending counts
// objects still not converged after it (failed ones included).
type SyncResult struct {
	Created, Updated, Deleted, Failed, Pending int
	Errors                                     []ObjectError
	// ForeignHeld lists every desired frontend a foreign load balancer holds
	// now (not only those tried in this Sync), by key; see foreign.go.
	ForeignHeld []ForeignFrontend
	// LeftOut lists, by key, desired load balancers that left out local
	// backends because HNS has no endpoint for them (spares stood in where
	// the cap allowed), with those backends' IPs.
	LeftOut []LeftOutBackends
	// LearnedBackendCap is the backend cap HNS was found to enforce
	// (backendcap.go), 0 while none was learned; once learned it is in
	// every result.
	LearnedBackendCap int
	// HNSReturned: HNS answered again in this Sync after refusing calls
	// as down (a restart), which may have dropped objects it held
	// (outage.go); only a listing (Repair) finds those.
	HNSReturned bool
	// HNSBack: HNS answered in this Sync after refusing calls and a probe
	// as down (outage.go), restarted or not. Listings HNS refused
	// meanwhile (a lookup for a create it refused: the create may have
	// been applied) need not wait for their backoff any more.
	HNSBack bool
	// ObjectsGone: this Sync's probe found a load balancer or endpoint of
	// hnsproxy's gone while the network is in place: deleted behind its
	// back (probe.go); only a listing (Repair) finds the rest.
	ObjectsGone bool
	// HNSDown: HNS refused a call as down and has not answered since
	// (outage.go). A Sync with no object due makes no call then, so only
	// this tells that its changes, if any came, could not reach HNS.
	HNSDown bool
	// ListingWanted: objects wait for a listing of HNS to answer what a
	// Sync could not tell (lookup.go), or failed creates piled up want
	// one to look for what they left (partial.go); a Repair answers it.
	ListingWanted bool
	// RepairLeft counts the objects a drift repair marked that no Sync
	// took yet (repairwork.go): while any is left the caller syncs again
	// at once, each Sync taking a chunk after what it was handed.
	RepairLeft int
	// NetworkChanged: the network is gone or was replaced (network.go);
	// nothing programmed on it holds, so the caller starts again.
	NetworkChanged *NetworkChangedError
}

// LeftOutBackends are local backends one load balancer could not use.
type LeftOutBackends struct {
	Key intent.LBKey
	IPs []string
}
