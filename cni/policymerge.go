package cni

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"slices"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// mergePolicies is the endpoint's policy list: the configuration's, in
// its order, then each policy hnscni adds that the list does not already
// carry. An OutBoundNAT exception list is one set: hnscni's exceptions go
// into the configuration's first OutBoundNAT with exceptions (as the
// reference plugins' ApplyOutboundNatPolicy adds a CIDR only if absent).
// A configured ProviderAddress wins over the network's.
func mergePolicies(config, own []hnslb.EndpointPolicy) []hnslb.EndpointPolicy {
	out := slices.Clone(config)
	for _, p := range own {
		switch p.Type {
		case hnslb.EndpointPolicyOutBoundNAT:
			var s hnslb.OutboundNatPolicySetting
			_ = hnslb.DecodeSettings(p.Settings, &s)
			if len(s.Destinations) > 0 {
				if slices.ContainsFunc(out, func(q hnslb.EndpointPolicy) bool { return natDestinationsContain(q, s.Destinations) }) {
					continue
				}
			} else if i := slices.IndexFunc(out, isExceptionNAT); i >= 0 {
				out[i] = addExceptions(out[i], s.Exceptions)
				continue
			}
		case hnslb.EndpointPolicySDNRoute:
			if slices.ContainsFunc(out, func(q hnslb.EndpointPolicy) bool { return sameRoute(q, p) }) {
				continue
			}
		case hnslb.EndpointPolicyProviderAddress:
			if slices.ContainsFunc(out, func(q hnslb.EndpointPolicy) bool { return q.Type == p.Type }) {
				continue
			}
		default:
			if slices.ContainsFunc(out, func(q hnslb.EndpointPolicy) bool { return q.Type == p.Type && jsonEqual(q.Settings, p.Settings) }) {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// masqException is win-bridge's ipMasqNetwork and win-overlay's ipMasq
// applied as those plugins apply them (pkg/hns ApplyOutboundNatPolicy):
// nothing if some OutBoundNAT already lists the CIDR as an exception, else
// a further OutBoundNAT with that one exception at the end of the list.
func masqException(list []hnslb.EndpointPolicy, cidr string) []hnslb.EndpointPolicy {
	if cidr == "" {
		return list
	}
	for _, p := range list {
		var s hnslb.OutboundNatPolicySetting
		if p.Type == hnslb.EndpointPolicyOutBoundNAT && hnslb.DecodeSettings(p.Settings, &s) == nil &&
			slices.ContainsFunc(s.Exceptions, func(e string) bool { return sameCIDR(e, cidr) }) {
			return list
		}
	}
	return append(list, hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{Exceptions: []string{cidr}}))
}

// isExceptionNAT reports an OutBoundNAT that is not a loopback DSR one.
func isExceptionNAT(p hnslb.EndpointPolicy) bool {
	if p.Type != hnslb.EndpointPolicyOutBoundNAT {
		return false
	}
	var s hnslb.OutboundNatPolicySetting
	return hnslb.DecodeSettings(p.Settings, &s) == nil && len(s.Destinations) == 0
}

// natDestinationsContain reports an OutBoundNAT whose destinations include
// every entry of want (a loopback DSR policy already listed).
func natDestinationsContain(p hnslb.EndpointPolicy, want []string) bool {
	if p.Type != hnslb.EndpointPolicyOutBoundNAT {
		return false
	}
	var s hnslb.OutboundNatPolicySetting
	if hnslb.DecodeSettings(p.Settings, &s) != nil {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(s.Destinations, func(h string) bool { return sameCIDR(h, w) }) {
			return false
		}
	}
	return true
}

// addExceptions adds the CIDRs an OutBoundNAT lacks, keeping its other settings.
func addExceptions(p hnslb.EndpointPolicy, extra []string) hnslb.EndpointPolicy {
	var settings map[string]any
	if err := json.Unmarshal(p.Settings, &settings); err != nil || settings == nil {
		settings = map[string]any{}
	}
	var s hnslb.OutboundNatPolicySetting
	_ = hnslb.DecodeSettings(p.Settings, &s)
	list := s.Exceptions
	for _, e := range extra {
		if !slices.ContainsFunc(list, func(h string) bool { return sameCIDR(h, e) }) {
			list = append(list, e)
		}
	}
	for k := range settings {
		if strings.EqualFold(k, "Exceptions") {
			delete(settings, k)
		}
	}
	settings["Exceptions"] = list
	raw, err := json.Marshal(settings)
	if err != nil {
		return p
	}
	return hnslb.EndpointPolicy{Type: p.Type, Settings: raw}
}

func sameRoute(a, b hnslb.EndpointPolicy) bool {
	if a.Type != hnslb.EndpointPolicySDNRoute || b.Type != hnslb.EndpointPolicySDNRoute {
		return false
	}
	var x, y hnslb.SDNRoutePolicySetting
	return hnslb.DecodeSettings(a.Settings, &x) == nil && hnslb.DecodeSettings(b.Settings, &y) == nil &&
		sameCIDR(x.DestinationPrefix, y.DestinationPrefix)
}

// sameCIDR compares two CIDRs (or addresses) by value: "10.96.0.1/12" and
// "10.96.0.0/12" are one.
func sameCIDR(a, b string) bool {
	pa, errA := netip.ParsePrefix(a)
	pb, errB := netip.ParsePrefix(b)
	if errA == nil && errB == nil {
		return pa.Masked() == pb.Masked()
	}
	return a == b
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}
