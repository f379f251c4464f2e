package events

// MaxRaisedOneByOne is how many objects' problems of one kind are raised
// on their own objects while more than that many objects have it.
const MaxRaisedOneByOne = 10

// Placement is where one object's problem is raised.
type Placement int

const (
	// Nowhere: the Node's Warning stands for it, and it is owed to its
	// object once few have the problem (Bound.Owed).
	Nowhere Placement = iota
	// OnObject: on the object whose problem it is (its Service).
	OnObject
	// OnNode: on the Node, for this and the others raised nowhere.
	OnNode
)

// Bound places the events of one kind of problem that one cause on the
// node can give to every load balancer (HNS refusing every write, an HNS
// restart that lost the containers' endpoints, another service proxy
// holding the frontends): one event per Service from every such node,
// which client-go's events.k8s.io broadcaster does not thin (its series
// fold only events of one object, those of one reason whatever their notes:
// raise one round's through Batch). While more than
// MaxRaisedOneByOne objects have the problem (a streak), at most that many
// of them are raised on their objects, the next on the Node, the rest
// nowhere. The streak ends when at most MaxRaisedOneByOne have it, not
// only when none does: one problem that lasts for weeks must not silence
// those that come and go beside it, long after the Node's Warning expired
// (kube-apiserver --event-ttl, an hour by default). Then those raised
// nowhere are owed to their objects.
//
// Each round (one Sync's result) starts with Round, then takes Next for
// each object whose problem is new or changed, or Owed.
type Bound[K comparable] struct {
	have       int        // objects with the problem this round
	onObject   map[K]bool // with the problem, raised on their objects
	silent     map[K]bool // with the problem, raised on no object of theirs
	streak     bool       // more than MaxRaisedOneByOne have it
	raised     int        // on their objects in this streak, those before it included
	nodeRaised bool       // the Node's Warning in this streak
}

// Round starts a round with the objects that have the problem now.
func (b *Bound[K]) Round(have map[K]bool) {
	if b.onObject == nil {
		b.onObject, b.silent = map[K]bool{}, map[K]bool{}
	}
	for _, m := range []map[K]bool{b.onObject, b.silent} {
		for k := range m {
			if !have[k] {
				delete(m, k)
			}
		}
	}
	b.have = len(have)
	switch {
	case b.have <= MaxRaisedOneByOne:
		b.streak, b.nodeRaised = false, false
	case !b.streak:
		b.streak, b.raised = true, len(b.onObject)
	}
}

// Owed reports whether k's problem, raised nowhere, is due on its object
// now that few have the problem.
func (b *Bound[K]) Owed(k K) bool { return b.silent[k] && !b.streak }

// Next places k's new, changed or owed problem.
func (b *Bound[K]) Next(k K) Placement {
	if !b.streak || b.raised < MaxRaisedOneByOne {
		if b.streak {
			b.raised++
		}
		b.onObject[k] = true
		delete(b.silent, k)
		return OnObject
	}
	delete(b.onObject, k)
	b.silent[k] = true
	if b.nodeRaised {
		return Nowhere
	}
	b.nodeRaised = true
	return OnNode
}
