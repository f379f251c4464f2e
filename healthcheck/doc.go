// Package healthcheck owns hnsproxy's health endpoints, with kube-proxy
// 1.37's semantics (pkg/proxy/healthcheck) so probes, load balancers and
// autoscalers that know kube-proxy need no change:
//
//   - ProxyHealthServer serves /healthz and /livez on --healthz-bind-address.
//     The proxy is healthy unless an update has been queued (QueuedUpdate)
//     and not synced (Updated) for longer than the health timeout (2x the
//     sync period), counted once the sync loop started (SyncLoopStarted).
//     Before the loop starts (hnsproxy waits for the HNS network) /healthz is
//     unhealthy: kube-proxy, whose proxier waits for the network, serves no
//     /healthz then. /healthz is also unhealthy when the node is being
//     deleted or is tainted ToBeDeletedByClusterAutoscaler, so cloud load
//     balancers drain it. /livez ignores the node, and unlike kube-proxy's
//     it does not fail for changes HNS did not take: it fails only when the
//     sync loop stops finishing syncs while not waiting on HNS (liveness.go),
//     so a hung HNS does not get the pod restarted.
//   - ServiceHealthServer opens one HTTP server per health-check node port
//     of LoadBalancer Services with externalTrafficPolicy Local and listen
//     IP, answering 200 when this node has local endpoints of the listen
//     IP's family and the proxy is healthy, and 503 otherwise. Like
//     kube-proxy's per-family servers, each listen IP counts its own
//     family's endpoints and is opened (and retried) on its own, so a port
//     taken on :: leaves 0.0.0.0 serving.
//
// Both count their answers in kube-proxy's metrics.
package healthcheck
