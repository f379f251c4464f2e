package reconciler

import (
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Remote endpoints carry hnsproxy's mark in their name. Without one, only a
// durable declaration in the state file (declareCreates) lets a restart
// tell a remote endpoint whose create was interrupted (its ID never
// recorded) from another program's, and that declaration costs an fsync
// before every Sync that creates a remote endpoint: at 5,000 nodes nearly
// every change. With the mark, the object says whose it is: Start claims an
// unowned remote endpoint that bears it (claimInterrupted), and so does a
// drift repair soon after Start, for a create abandoned before the restart
// that lands after its listing (claimCarried). Neither kube-proxy nor a CNI
// names a remote endpoint like this.
//
// Whether HNS keeps a remote endpoint's name is not known from any public
// capture (docs/simulator.md, "Echo profiles"). So names replace
// declarations only once HNS has shown that it keeps them: a create's reply
// (hcn queries the stored object after a create, as a listing does) or
// Start's listing carries one of our names. A reply without it, or with
// another, settles the other way for this process: creates are declared as
// before.

// remoteEndpointNamePrefix starts the name of every remote endpoint
// hnsproxy creates; the endpoint's address follows it.
const remoteEndpointNamePrefix = "hnsproxy-remote-"

// remoteEndpointName is the name hnsproxy gives the remote endpoint of ip.
func remoteEndpointName(ip string) string { return remoteEndpointNamePrefix + ip }

// namedOurs reports whether ep is a remote endpoint bearing hnsproxy's name
// for its address. Case is ignored, and the address is compared as an
// address where its text differs: HNS may answer text in another case or
// form than it was sent, as it does GUIDs.
func namedOurs(ep *hnslb.Endpoint) bool {
	n, ip := ep.Name, ep.IP()
	if !ep.IsRemote() || ip == "" || len(n) < len(remoteEndpointNamePrefix) ||
		!strings.EqualFold(n[:len(remoteEndpointNamePrefix)], remoteEndpointNamePrefix) {
		return false
	}
	named := n[len(remoteEndpointNamePrefix):]
	return strings.EqualFold(named, ip) || SameAddress(named, ip)
}

// nameEcho is what this process knows of HNS keeping remote endpoint names.
type nameEcho uint8

const (
	namesUnknown nameEcho = iota // nothing seen yet: declare
	namesKept                    // a reply or a listing showed one of our names: no declaration needed
	namesLost                    // a create's reply lacked the name it was sent: declare, for good
)

// namesShown is what a create's reply (the stored object, which a
// restart's listing will show alike) says of HNS keeping our names.
func namesShown(reply *hnslb.Endpoint) nameEcho {
	switch {
	case reply == nil || !reply.IsRemote():
		return namesUnknown
	case namedOurs(reply):
		return namesKept
	}
	return namesLost
}

// learnNames settles nameEcho from what replies showed; namesLost is for
// good.
func (r *Reconciler) learnNames(shown nameEcho) {
	switch {
	case shown == namesUnknown || r.names == namesLost || r.names == shown:
		return
	case shown == namesKept:
		r.names = namesKept
		r.log.V(2).Info("HNS keeps remote endpoint names: their creates need no declaration in the state file")
	default:
		r.names = namesLost
		r.log.Info("HNS answered a remote endpoint without the name it was sent: each create of one is declared in the state file first, one fsync per Sync that makes one")
	}
	if r.opts.RemoteEndpointNames != nil {
		r.opts.RemoteEndpointNames(r.names == namesKept)
	}
}

// namesSeen settles nameEcho from Start's listing: one of our names in it
// shows that HNS keeps them.
func (r *Reconciler) namesSeen(eps []hnslb.Endpoint) {
	for i := range eps {
		if namedOurs(&eps[i]) {
			r.learnNames(namesKept)
			return
		}
	}
}

// declaresEndpoints reports whether a remote endpoint's create must be
// declared in the state file before it is made.
func (r *Reconciler) declaresEndpoints() bool { return r.names != namesKept }
