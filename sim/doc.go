// Package sim is the room for what stands in for Windows off it. It owns
// hnsproxy's in-memory HNS: an hnslb.Client that keeps
// networks, endpoints, namespaces and load balancers in memory and enforces
// the rules real HNS enforces (generated GUIDs, the frontend conflict rule,
// the backend cap, feature checks per HNS version, IP uniqueness, typed
// errors with HNS's codes).
//
// Beside the rules it models HNS as a service: latency per hcn RPC, injected
// faults drawn from a seeded generator, an "HNS restart" window during which
// every call fails as unavailable, and counters of every call by operation
// and result, including what hcn would cost in HNS calls. Tests, benchmarks
// and cmd/hnssim use it; docs/simulator.md lists each rule and its source.
package sim
