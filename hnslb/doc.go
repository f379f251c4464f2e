// Package hnslb owns hnsproxy's view of the Windows Host Networking Service
// (HNS): the HNS v2 object model (load balancers, endpoints, networks,
// namespaces) with the exact JSON HNS takes, typed HNS errors, feature
// detection by HNS version, the Client interface every consumer uses, and
// Around, the one wrapper of it that sees every call.
//
// hcsshim's hcn package only builds on Windows, so the types here are our own
// copies with identical field names and JSON tags; the hcnclient sub-package
// converts them on Windows and proves the JSON is byte-identical.
//
// Implementations of Client live elsewhere by role: hcnclient (the real HNS,
// Windows), and, standing in for Windows off it, package sim (an in-memory
// HNS) and sim/remote (that simulator over a unix socket).
package hnslb
