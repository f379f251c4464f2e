package cni

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// configPolicy is one endpoint policy a configuration lists, in HNS v2 form.
type configPolicy = hnslb.EndpointPolicy

// v2Types are the endpoint policy types whose spelling hnscni normalises
// (HNS matches type names without regard to case; Calico writes "SDNROUTE").
var v2Types = []hnslb.EndpointPolicyType{
	hnslb.EndpointPolicyPortMapping, hnslb.EndpointPolicyACL, hnslb.EndpointPolicyOutBoundNAT,
	hnslb.EndpointPolicySDNRoute, hnslb.EndpointPolicyProviderAddress, hnslb.EndpointPolicyEncapOverhead,
}

// v1Policy is an HNS v1 endpoint policy: the type's fields sit beside
// "Type" (win-bridge/win-overlay without apiVersion 2, Calico).
type v1Policy struct {
	Type              string
	ExceptionList     []string
	Destinations      []string
	DestinationPrefix string
	NeedEncap         bool
	PA                string
	InternalPort      uint16
	ExternalPort      uint16
	Protocol          json.RawMessage
}

// v1Types maps the HNS v1 type names to their v2 successors.
var v1Types = map[string]hnslb.EndpointPolicyType{
	"outboundnat": hnslb.EndpointPolicyOutBoundNAT,
	"route":       hnslb.EndpointPolicySDNRoute,
	"sdnroute":    hnslb.EndpointPolicySDNRoute,
	"pa":          hnslb.EndpointPolicyProviderAddress,
	"nat":         hnslb.EndpointPolicyPortMapping,
}

// decodePolicy reads one EndpointPolicy value: v2 when it has "Settings",
// else v1, converted to v2 (hnscni speaks HNS v2 only). Known types are
// checked so a bad CIDR or address is a configuration error, not an HNS one.
func decodePolicy(where string, raw json.RawMessage) (configPolicy, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return configPolicy{}, invalidConfig("%s: value is not a JSON object: %v", where, err)
	}
	hasSettings := false
	for k := range probe {
		hasSettings = hasSettings || strings.EqualFold(k, "Settings")
	}
	var p configPolicy
	if hasSettings {
		var v2 struct {
			Type     string
			Settings json.RawMessage
		}
		if err := json.Unmarshal(raw, &v2); err != nil {
			return configPolicy{}, invalidConfig("%s: %v", where, err)
		}
		p = configPolicy{Type: canonicalType(v2.Type), Settings: v2.Settings}
	} else {
		var err error
		if p, err = fromV1(raw); err != nil {
			return configPolicy{}, invalidConfig("%s: %v", where, err)
		}
	}
	if p.Type == "" {
		return configPolicy{}, invalidConfig("%s: policy without a Type", where)
	}
	if err := checkPolicy(p); err != nil {
		return configPolicy{}, invalidConfig("%s (%s): %v", where, p.Type, err)
	}
	return p, nil
}

func canonicalType(t string) hnslb.EndpointPolicyType {
	for _, k := range v2Types {
		if strings.EqualFold(t, string(k)) {
			return k
		}
	}
	return hnslb.EndpointPolicyType(t)
}

// fromV1 converts an HNS v1 policy. Types without a known v2 successor
// keep their fields as settings.
func fromV1(raw json.RawMessage) (configPolicy, error) {
	var v v1Policy
	if err := json.Unmarshal(raw, &v); err != nil {
		return configPolicy{}, err
	}
	t, known := v1Types[strings.ToLower(v.Type)]
	if !known {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return configPolicy{}, err
		}
		for k := range fields {
			if strings.EqualFold(k, "Type") {
				delete(fields, k)
			}
		}
		settings, err := json.Marshal(fields)
		if err != nil {
			return configPolicy{}, err
		}
		return configPolicy{Type: canonicalType(v.Type), Settings: settings}, nil
	}
	switch t {
	case hnslb.EndpointPolicyOutBoundNAT:
		return hnslb.NewEndpointPolicy(t, hnslb.OutboundNatPolicySetting{Exceptions: v.ExceptionList, Destinations: v.Destinations}), nil
	case hnslb.EndpointPolicySDNRoute:
		return hnslb.NewEndpointPolicy(t, hnslb.SDNRoutePolicySetting{DestinationPrefix: v.DestinationPrefix, NeedEncap: v.NeedEncap}), nil
	case hnslb.EndpointPolicyProviderAddress:
		return hnslb.NewEndpointPolicy(t, hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: v.PA}), nil
	default: // PortMapping from v1 NAT; v1 writes the protocol as a name.
		var proto string
		if err := json.Unmarshal(v.Protocol, &proto); err != nil && len(v.Protocol) > 0 {
			proto = string(v.Protocol)
		}
		num, err := protocolNumber(proto)
		if err != nil {
			return configPolicy{}, err
		}
		return hnslb.NewEndpointPolicy(t, hnslb.PortMappingPolicySetting{Protocol: num, InternalPort: v.InternalPort, ExternalPort: v.ExternalPort}), nil
	}
}

// checkPolicy validates the settings of the types hnscni reads itself.
func checkPolicy(p configPolicy) error {
	switch p.Type {
	case hnslb.EndpointPolicyOutBoundNAT:
		var s hnslb.OutboundNatPolicySetting
		if err := hnslb.DecodeSettings(p.Settings, &s); err != nil {
			return err
		}
		for _, e := range append(slices.Clone(s.Exceptions), s.Destinations...) {
			if !isAddrOrPrefix(e) {
				return fmt.Errorf("%q is neither an address nor a CIDR", e)
			}
		}
	case hnslb.EndpointPolicySDNRoute:
		var s hnslb.SDNRoutePolicySetting
		if err := hnslb.DecodeSettings(p.Settings, &s); err != nil {
			return err
		}
		if !isAddrOrPrefix(s.DestinationPrefix) {
			return fmt.Errorf("DestinationPrefix %q is not a CIDR", s.DestinationPrefix)
		}
	case hnslb.EndpointPolicyProviderAddress:
		var s hnslb.ProviderAddressEndpointPolicySetting
		if err := hnslb.DecodeSettings(p.Settings, &s); err != nil {
			return err
		}
		if _, err := parseAddr(s.ProviderAddress); err != nil {
			return fmt.Errorf("ProviderAddress %q: %v", s.ProviderAddress, err)
		}
	default:
		if len(p.Settings) > 0 && !bytes.HasPrefix(bytes.TrimSpace(p.Settings), []byte("{")) {
			return fmt.Errorf("settings are not a JSON object")
		}
	}
	return nil
}

func isAddrOrPrefix(s string) bool {
	if _, err := netip.ParsePrefix(s); err == nil {
		return true
	}
	_, err := parseAddr(s)
	return err == nil
}
