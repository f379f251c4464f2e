// Package remote serves an hnslb.Client on a unix socket and offers the
// matching client, so that separate processes (hnsproxy, hnscni, tests)
// share one simulated HNS the way they share the HNS service on Windows.
// The client speaks the frames wire (frames.go: one call at a time on a
// connection, on the calling goroutine, as an hcn call is); the same socket
// serves HTTP for curl and other tools, through the same handler. Bodies
// are the hnslb types, i.e. HNS's own JSON documents; errors
// travel as {Op, Code, Message} and come back as *hnslb.Error. Besides the
// HNS API the server offers diagnostics for the simulator: /dump, /stats,
// /node, /trace, /faults and /echo.
package remote
