// Package hcnclient is hnslb.Client over the real Windows Host Networking
// Service, through github.com/Microsoft/hcsshim/hcn.
//
// It owns three things: converting hnslb's HNS v2 types to and from hcn's (a
// JSON round trip, exact because both declare the same fields and tags; a
// Windows test proves the JSON is byte-identical for every object we send;
// load balancers, which every change writes, are copied field by field to
// the same result, at half the client's CPU per call); mapping hcn's
// errors to *hnslb.Error with HNS's real codes, so callers can tell "not
// found" from "HNS unreachable"; and listing again by ID when hcn's listing
// fails because an object went between its enumeration and its read. It
// makes the endpoint create and the load balancer modify itself, because
// hcn's leave handles open when HNS refuses them.
//
// hcn only builds on Windows, so everything that touches it lives in
// _windows.go files; elsewhere New returns ErrNotWindows. The Windows tests
// run on Linux under Wine (hack/wine-test.sh).
package hcnclient
