// Package desired owns the step from Kubernetes objects to the HNS objects
// one Windows node needs: a pure, deterministic function of the node's
// Services, EndpointSlices, its own identity, hnsproxy's configuration and
// the HNS feature set. It returns reconciler load balancers and remote
// endpoints, plus "problems" (event reasons and messages) the caller turns
// into events and metrics. It does no I/O, reads no clock and logs nothing.
//
// The mapping follows what kube-proxy's winkernel and Linux proxiers do; every
// choice made here is written next to the code that makes it.
//
// HNS has no session-affinity timeout: sessionAffinity ClientIP becomes the
// SourceIP distribution, and a timeout other than the default is reported
// as a problem rather than silently ignored.
package desired
