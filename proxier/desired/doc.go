// Package desired owns the step from Kubernetes objects to the HNS objects
// one Windows node needs: a pure, deterministic function of the node's
// Services, EndpointSlices, its own identity, hnsproxy's configuration and
// the HNS feature set. It returns load balancers and remote endpoints in
// package intent's vocabulary, plus "problems" (event reasons and messages)
// the caller turns into events and metrics. It does no I/O, reads no clock
// and logs nothing.
//
// The mapping is what kube-proxy's winkernel proxier does
// (kubernetes/kubernetes pkg/proxy/winkernel) and, where that is silent,
// what the Linux proxiers do; every choice of ours is written next to the
// code that makes it and listed in README.md here.
//
// HNS has no session-affinity timeout: sessionAffinity ClientIP becomes the
// SourceIP distribution, and a timeout other than the default is reported
// as a problem rather than silently ignored.
package desired
