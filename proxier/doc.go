// Package proxier turns Kubernetes Services, EndpointSlices and this Node into
// HNS load balancers on this node. It owns its Service and EndpointSlice
// informers (informers.go) and the handlers of those and of the Node's, the change
// tracking (which Services must be recomputed), the conflict rule between
// Services that ask for the same HNS frontend, and the sync loop that feeds the
// pure desired-state function (package desired) into the reconciler: each
// load balancer and remote endpoint a desired.Change names is upserted or
// deleted there. The set of remote endpoints is desired.State's alone; the
// proxier keeps no copy of it.
//
// What hnsproxy owns in HNS: the load balancers it creates (recorded by the
// reconciler's state file), the remote endpoints for backends on other nodes,
// and on overlay the source-VIP endpoint. What it leaves alone: local pod
// endpoints and networks (the CNI's), and load balancers others created (CNI
// loopback DSR, other agents) unless one blocks a frontend a Service needs.
package proxier
