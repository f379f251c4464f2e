// Package reconciler converges HNS towards the load balancers and remote
// endpoints hnsproxy wants on this node. It knows nothing about Kubernetes.
//
// What it owns in HNS: the load balancers and remote endpoints whose IDs it
// records in its state file (those it created, and identical ones it adopted;
// a snapshot plus a journal of changes, see journal.go), with each load
// balancer's baseline: what HNS answered when it was written, against which
// drift and adoption judge later listings (baseline.go).
// What it leaves alone: local endpoints (made by the CNI), and every other
// load balancer or endpoint, unless a foreign load balancer blocks a desired
// frontend (same family, VIP, protocol and port), or a foreign remote
// endpoint shares a local endpoint's address (sharedaddress.go): that one is
// deleted, with a log line saying why. An object whose delete HNS reported done stays
// hnsproxy's to delete again until Repairs' listings show it gone
// (deleted.go): HNS has kept objects after such deletes. A load balancer
// without port mappings that a failed create of hnsproxy's left becomes
// hnsproxy's to delete once a listing shows it (partial.go).
//
// The model is cilium/statedb's reconciler: every desired object carries a
// status (pending, done, error with the next retry); operations are
// idempotent; failures back off exponentially per object; Repair lists HNS on
// a slower period and marks drifted objects for the next Sync.
//
// Remote endpoints are given, not derived: the desired state (package
// proxier/desired) owns the set, and its caller hands each change over with
// UpsertEndpoint and DeleteEndpoint, as it does load balancers with Upsert and
// Delete. The reconciler keeps only what is about HNS: the IDs it realized
// and, per endpoint ID, the realized load balancers using it. Ordering: a
// remote endpoint is created before any load balancer references it, and
// deleted only once no realized load balancer references it; a load balancer
// whose remote backend has no desired, realized endpoint leaves it out (a
// missing backend) and is retried when the endpoint is created.
//
// Local backends are resolved to the CNI's endpoint IDs through an index
// IP → endpoint ID, built by listing the network's endpoints at Start and
// Repair. When a Sync meets a local backend IP the index does not know (a pod
// that just started), it lists HNS namespaces, where the runtime and the CNI
// put each pod's endpoint, and reads only the endpoints not indexed yet; if
// that leaves the IP unknown, it is left out, the load balancer's status
// shows it, and the next listing of the network looks for it. A load
// balancer write that HNS refuses because an endpoint is gone drops its
// local backends from the
// index, so the retry looks them up again (a pod recreated with the same IP).
// A remote backend whose slice named no node (intent.Backend.NodeUnknown)
// resolves to the local endpoint the index holds at its address, if any,
// and its remote endpoint is then not made (nodeunknown.go).
// HNS's code does not say whether a backend or the load balancer is gone,
// so after a failed modify a Get decides (modify.go); the same file owns
// when an update is a modify at all (ModifyMode).
// A Sync never lists load balancers or endpoints (lookup.go): an object
// that needs what only a listing tells (what holds a frontend HNS refused,
// what a lost create made, a foreign holder of a new tenant frontend) waits
// for the next listing, a Lookup the Sync asks for (SyncResult.ListingWanted)
// or a Repair, and the rest of the Sync goes on. One listing's silence is
// not proof: an owned object a listing left out stays owned until a read
// or a delete by ID says it is gone (unlisted.go), a lost create's document
// is kept against a holder its retry meets (lostunseen.go), and a failed
// create's leftover and an object whose delete HNS reported done are
// looked for by silentListings listings (partial.go, deleted.go). Nor is
// one get's: hcn's gets are filtered listings, and each is asked again
// while it answers "not found", silentListings times in all
// (hnslb.GetLooking, deadline_calls.go).
//
// Every HNS call has a deadline (deadline.go): a hung call is abandoned,
// reported, and its object waits until the call returns while the others go
// on. The calls hnsproxy makes at start-up, before a Reconciler exists,
// share those deadlines (StartupCalls).
//
// The network is read by name at each Repair, and after answers that
// suggest it is gone: one gone, or replaced by another of its name, is
// reported (NetworkChangedError; network.go) for the caller to start again.
// Every 30 s a Sync reads one load balancer and one endpoint of its own by
// ID (probe.go): one gone makes the network suspect, and with the network
// in place is reported (SyncResult.ObjectsGone) for the caller to Repair.
package reconciler
