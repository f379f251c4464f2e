// Package diag owns hnsproxy-diag's diagnosis of one Windows node: it reads
// the node's HNS (through hnslb.Reader only, so it cannot write) and the
// Kubernetes objects, computes what hnsproxy would program with the pure
// desired-state function (proxier/desired), and reports per Service port
// the load balancers HNS holds, by pod name and node, hnsproxy's or
// foreign, and what is missing or extra; and it traces packets through the
// VFP model (vfp) over the node's real state, naming what it meets.
//
// ReadWithin gathers the inputs (all I/O is there); Diagnose and Trace are pure
// functions of them.
package diag
