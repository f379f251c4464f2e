// Package sourcevip obtains an overlay node's source VIP when none is
// configured: one address of the node's pod subnet, reserved through the
// IPAM plugin the node's CNI configuration names, invoked as a container
// runtime invokes it for a pod (a fixed container ID stands for hnsproxy).
// The IPAM's own store then keeps pods off the address. It owns the
// reservation record beside the state file (the address and the IPAM
// input it was reserved with), so a restart reuses the address and
// --cleanup releases it; the HNS endpoint carrying the address belongs to
// the proxier and reconciler as before.
package sourcevip
