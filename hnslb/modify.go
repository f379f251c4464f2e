package hnslb

// ModifyMayIgnoreBackends reports an HNS version known to answer
// ModifyLoadBalancer with success while leaving the backends unchanged:
// 15.4, on early Windows Server 2025 builds (kubernetes/kubernetes#131466).
// A caller that modifies there anyway must read the load balancer back.
func ModifyMayIgnoreBackends(v Version) bool { return v == Version{Major: 15, Minor: 4} }
