// Package app is the hnsproxy daemon around the proxier: the cobra command
// (kube-proxy's flags via package options), logging, the Kubernetes client
// and this node's informer factory, the event broadcaster, the HNS client (real,
// in-process simulator, or the hnssim service), the start-up checks of HNS
// capabilities and network, and the healthz and metrics servers. It then
// hands everything to runProxier (proxier.go), the one place that builds and
// runs the sync loop. It also owns how a run starts and stops (service.go:
// signals, or the Windows Service Control Manager with --windows-service)
// and --cleanup (cleanup.go), and it exits to be restarted when its --config
// file changes (configwatch.go).
package app
