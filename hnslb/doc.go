// Package hnslb owns hnsproxy's view of the Windows Host Networking Service
// (HNS): the HNS v2 object model (load balancers, endpoints, networks,
// namespaces) with the exact JSON HNS takes, typed HNS errors, feature
// detection by HNS version, and the Client interface every consumer uses.
//
// hcsshim's hcn package only builds on Windows, so the types here are our own
// copies with identical field names and JSON tags; the hcnclient sub-package
// converts them on Windows and proves the JSON is byte-identical. Sub-packages:
//
//   - sim: an in-memory HNS that enforces HNS's rules (tests, benchmarks, hnssim)
//   - vfp: a packet model that traces flows through one or more nodes' HNS state
//   - hcnclient: the real HNS through github.com/Microsoft/hcsshim/hcn (Windows)
//   - remote: the Client over a unix socket, served by cmd/hnssim
//   - reconciler: converges desired load balancers and remote endpoints
package hnslb
