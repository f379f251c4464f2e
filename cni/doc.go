// Package cni is the hnscni plugin: it wires a pod into an HNS network
// (l2bridge or overlay) as the reference Windows plugins do (win-bridge,
// win-overlay, sdnbridge, sdnoverlay), reading their configurations as
// they are (compat.go, policies.go). Addresses come from the configured
// IPAM plugin, or from HNS when there is none. It owns the HNS endpoints it
// names "<containerID>_<network>" (endpoint.go) on its configured network
// and nothing else; the network itself belongs to the node (created only
// if missing). cmd/hnscni only calls Main.
package cni
