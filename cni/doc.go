// Package cni is the hnscni plugin: it wires a pod into an HNS network
// (l2bridge or overlay) the way the reference Windows plugins do, with IPAM
// delegated to another plugin (host-local). It owns the HNS endpoints it
// names "<containerID>_<ifname>" on its configured network and nothing
// else; the network itself belongs to the node (created only if missing).
// cmd/hnscni only calls Main.
package cni
