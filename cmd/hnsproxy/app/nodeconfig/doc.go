// Package nodeconfig owns how hnsproxy's resolved options and this node's
// HNS become the desired state's configuration (desired.Config): which HNS
// features hnsproxy uses (DSR where asked for and possible, the backend
// cap), the network mode, the source VIP, the health-check gateway and the
// host MAC. The daemon and hnsproxy-diag both
// call it, so a diagnosis compares HNS with what the daemon would program.
// It only reads HNS (hnslb.Reader).
package nodeconfig
