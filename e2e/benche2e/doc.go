//go:build linux && benche2e

// Command benche2e measures the real hnsproxy process at scale (`make
// bench-e2e`, hack/bench-e2e.sh): a real kube-apiserver, etcd and
// kube-controller-manager (only its EndpointSlice controller), Pods whose
// status the bench sets itself (no kubelet), N Services over M endpoints,
// and the Linux hnsproxy binary against hnssim with a latency per hcn RPC
// on one simulated node. It reports process RSS, time to the first full
// sync, recovery after an HNS restart and after a node reboot, and network
// programming latency per change, as one JSON object on stdout.
//
// It owns no product logic: the control plane, cluster and processes come
// from e2e/framework; this package only loads objects, changes them and
// watches hnssim and /proc.
package main
