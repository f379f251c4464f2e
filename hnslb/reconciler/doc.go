// Package reconciler converges HNS towards the load balancers and remote
// endpoints hnsproxy wants on this node. It knows nothing about Kubernetes.
package reconciler
