package sim

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Echo is how this HNS answers with the objects it stores: which liberties
// it takes with load balancers and endpoints in every document it returns
// (create and modify replies, gets and lists alike: hcn's create and modify
// query the stored object as a listing does). What real HNS does here is
// unknown beyond a few public captures; each field models one possibility,
// and they combine with each other and with every Profile (see
// docs/simulator.md, "Echo profiles"). The zero value answers what was
// stored. Snapshot and Export are not answers and never change.
type Echo struct {
	// DropUndeclaredFlags drops port-mapping flag 16 (VipExternalIP), which
	// kube-proxy sends but hcn does not declare.
	DropUndeclaredFlags bool
	// DropUnconfirmedFlags drops every flag no public capture shows echoed:
	// port-mapping flags 1, 4, 8 and 16 and load balancer flag 2 (IPv6).
	DropUnconfirmedFlags bool
	// UpperGUIDs answers GUIDs (object IDs, backend, network and namespace
	// references) in upper case, as HNS's v1 API does.
	UpperGUIDs bool
	// Reorder answers a load balancer's backends and VIPs, and a
	// dual-stack endpoint's addresses, rotated by one more place on each
	// answer.
	Reorder bool
	// OmitEmpty answers empty lists as absent (nil); on the wire hnslb's
	// omitempty tags already leave them out.
	OmitEmpty bool
	// SchemaMinor, when not 0, is the minor schema version answered (2.x).
	SchemaMinor int
	// UnknownFields adds fields hnslb does not know to answers on the wire
	// (sim/remote.WithUnknownFields, hnssim); in-process documents are Go
	// structs and cannot carry them.
	UnknownFields bool
	// DropRemoteEndpointNames answers remote endpoints without their Name:
	// no capture shows a named remote endpoint (kube-proxy names none), so
	// whether HNS keeps that field for them is unknown.
	DropRemoteEndpointNames bool
	// LongIPv6 answers IPv6 addresses (frontend and source VIPs, endpoint
	// addresses) in their full upper-case form, "FD00:0010:…:0010": no
	// capture shows an IPv6 address HNS answered, and Windows keeps an
	// address as 16 bytes, which it may print in any valid text form.
	LongIPv6 bool
	// DropDistribution answers every load balancer with distribution 0
	// (None): no capture shows a SourceIP (session affinity) load balancer
	// answered, and hcn's omitempty field would drop a 0 anyway, so whether
	// HNS answers the distribution it applies is unknown.
	DropDistribution bool
}

// The names of Echo's options, as ParseEcho and hnssim's --echo take them.
const (
	EchoDropUndeclaredFlags  = "drop-undeclared-flags"
	EchoDropUnconfirmedFlags = "drop-unconfirmed-flags"
	EchoUpperGUIDs           = "upper-guids"
	EchoReorder              = "reorder"
	EchoOmitEmpty            = "omit-empty"
	EchoSchemaMinor          = "schema-minor"
	EchoUnknownFields        = "unknown-fields"
	EchoDropEndpointNames    = "drop-remote-endpoint-names"
	EchoLongIPv6             = "ipv6-long-form"
	EchoDropDistribution     = "drop-distribution"
)

// EchoNames lists the options ParseEcho knows, one a possible answer.
func EchoNames() []string {
	return []string{EchoDropUndeclaredFlags, EchoDropUnconfirmedFlags, EchoUpperGUIDs, EchoReorder,
		EchoOmitEmpty, EchoSchemaMinor, EchoUnknownFields, EchoDropEndpointNames, EchoLongIPv6, EchoDropDistribution}
}

// ParseEcho reads a comma-separated list of echo option names ("" is none,
// "all" every one); schema-minor answers schema 2.1.
func ParseEcho(s string) (Echo, error) {
	var e Echo
	names := strings.Split(s, ",")
	if strings.TrimSpace(s) == "all" {
		names = EchoNames()
	}
	for _, n := range names {
		switch strings.TrimSpace(n) {
		case "":
		case EchoDropUndeclaredFlags:
			e.DropUndeclaredFlags = true
		case EchoDropUnconfirmedFlags:
			e.DropUnconfirmedFlags = true
		case EchoUpperGUIDs:
			e.UpperGUIDs = true
		case EchoReorder:
			e.Reorder = true
		case EchoOmitEmpty:
			e.OmitEmpty = true
		case EchoSchemaMinor:
			e.SchemaMinor = 1
		case EchoUnknownFields:
			e.UnknownFields = true
		case EchoDropEndpointNames:
			e.DropRemoteEndpointNames = true
		case EchoLongIPv6:
			e.LongIPv6 = true
		case EchoDropDistribution:
			e.DropDistribution = true
		default:
			return Echo{}, fmt.Errorf("sim: unknown echo option %q (known: %s, or all)", n, strings.Join(EchoNames(), ", "))
		}
	}
	return e, nil
}

// SetEcho changes how this HNS answers from the next call on.
func (h *HNS) SetEcho(e Echo) {
	h.mu.Lock()
	h.echo = e
	h.mu.Unlock()
}

// answerLB is what HNS answers for a stored load balancer; called with h.mu held.
func (h *HNS) answerLB(lb *hnslb.LoadBalancer) *hnslb.LoadBalancer {
	out := copyLoadBalancer(lb)
	e := h.echo
	if e == (Echo{}) {
		return out
	}
	drop := hnslb.PortMappingFlagsNone
	if e.DropUndeclaredFlags || e.DropUnconfirmedFlags {
		drop |= hnslb.PortMappingFlagsVipExternalIP
	}
	if e.DropUnconfirmedFlags {
		drop |= hnslb.PortMappingFlagsILB | hnslb.PortMappingFlagsUseMux | hnslb.PortMappingFlagsPreserveDIP
		out.Flags &^= hnslb.LoadBalancerFlagsIPv6
	}
	for i := range out.PortMappings {
		out.PortMappings[i].Flags &^= drop
		if e.DropDistribution {
			out.PortMappings[i].DistributionType = hnslb.DistributionNone
		}
	}
	if e.UpperGUIDs {
		out.ID = strings.ToUpper(out.ID)
		upperAll(out.HostComputeEndpoints)
	}
	if e.Reorder {
		h.echoTurns++
		rotate(out.HostComputeEndpoints, h.echoTurns)
		rotate(out.FrontendVIPs, h.echoTurns)
	}
	if e.OmitEmpty {
		out.HostComputeEndpoints = nilIfEmpty(out.HostComputeEndpoints)
		out.FrontendVIPs = nilIfEmpty(out.FrontendVIPs)
		out.PortMappings = nilIfEmpty(out.PortMappings)
	}
	if e.SchemaMinor != 0 {
		out.SchemaVersion.Minor = e.SchemaMinor
	}
	if e.LongIPv6 {
		out.SourceVIP = longIPv6(out.SourceVIP)
		for i, v := range out.FrontendVIPs {
			out.FrontendVIPs[i] = longIPv6(v)
		}
	}
	return out
}

// answerEndpoint is what HNS answers for a stored endpoint; called with h.mu held.
func (h *HNS) answerEndpoint(ep *hnslb.Endpoint) *hnslb.Endpoint {
	out := copyEndpoint(ep)
	e := h.echo
	if e.UpperGUIDs {
		out.ID = strings.ToUpper(out.ID)
		out.HostComputeNetwork = strings.ToUpper(out.HostComputeNetwork)
		out.HostComputeNamespace = strings.ToUpper(out.HostComputeNamespace)
	}
	if e.OmitEmpty {
		out.Policies = nilIfEmpty(out.Policies)
		out.Routes = nilIfEmpty(out.Routes)
	}
	if e.SchemaMinor != 0 {
		out.SchemaVersion.Minor = e.SchemaMinor
	}
	if e.Reorder && len(out.IpConfigurations) > 1 {
		// HNS's v1 view keeps an endpoint's addresses per family
		// (IPAddress, IPv6Address): which order its v2 answer lists them
		// in is not published.
		h.echoTurns++
		rotate(out.IpConfigurations, h.echoTurns)
	}
	if e.DropRemoteEndpointNames && out.IsRemote() {
		out.Name = ""
	}
	if e.LongIPv6 {
		for i := range out.IpConfigurations {
			out.IpConfigurations[i].IpAddress = longIPv6(out.IpConfigurations[i].IpAddress)
		}
	}
	return out
}

// longIPv6 writes an IPv6 address with every group in four upper-case
// digits; anything else is returned as it is.
func longIPv6(s string) string {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Is4In6() || a.Zone() != "" {
		return s
	}
	b := a.As16()
	groups := make([]string, 8)
	for i := range groups {
		groups[i] = fmt.Sprintf("%02X%02X", b[2*i], b[2*i+1])
	}
	return strings.Join(groups, ":")
}

// storedGUIDs writes a load balancer's backend references as HNS keeps
// GUIDs, whatever case the caller sent: lower case, as its v2 API answers.
func storedGUIDs(lb *hnslb.LoadBalancer) {
	for i, id := range lb.HostComputeEndpoints {
		lb.HostComputeEndpoints[i] = strings.ToLower(id)
	}
}

func upperAll(ids []string) {
	for i, id := range ids {
		ids[i] = strings.ToUpper(id)
	}
}

func rotate[T any](s []T, by int) {
	if len(s) > 1 {
		k := by % len(s)
		slices.Reverse(s[:k])
		slices.Reverse(s[k:])
		slices.Reverse(s)
	}
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
