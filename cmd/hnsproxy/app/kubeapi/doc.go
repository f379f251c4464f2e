// Package kubeapi owns how hnsproxy reaches the API server (its kubeconfig,
// with HostProcess container paths, --master, or in-cluster) and which
// Services and EndpointSlices it lists there. The daemon and hnsproxy-diag
// both use it, so the diagnosis reads the API server as the daemon does and
// computes its desired state from the same objects.
package kubeapi
