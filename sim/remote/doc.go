// Package remote serves an hnslb.Client over HTTP on a unix socket and
// offers the matching client, so that separate processes (hnsproxy, hnscni,
// tests) share one simulated HNS the way they share the HNS service on
// Windows. Bodies are the hnslb types, i.e. HNS's own JSON documents; errors
// travel as {Op, Code, Message} and come back as *hnslb.Error. Besides the
// HNS API the server offers diagnostics for the simulator: /dump, /stats,
// /node, /trace, /faults and /echo.
package remote
