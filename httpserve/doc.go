// Package httpserve owns how hnsproxy's HTTP servers (healthz/livez,
// metrics and debug, the per-Service health-check node ports) face the
// network: timeouts on every phase of a connection and caps on how many
// connections each listener, and all health-check node ports together, may
// hold. Their ports listen on node addresses anyone on the network can
// reach, so an idle-connection flood must run into these caps, never into
// the process's file-descriptor limit, where it would also break the state
// file and HNS calls.
package httpserve
