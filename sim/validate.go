package sim

import (
	"encoding/json"
	"net/netip"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// isGUID reports whether s is a GUID as HNS writes them and hcn parses
// them (go-winio's guid.FromString): 8-4-4-4-12 hex digits, either case, no
// braces. A regexp would be the bulk of a create's cost, hence the loop.
func isGUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// checkID rejects what is not a GUID, as hcn does before it calls HNS
// (errInvalidLoadBalancerID and friends in hcn/hcnerrors.go). It is an
// invalid parameter, never "not found".
func checkID(op Op, kind, id string) error {
	if !isGUID(id) {
		return hnsError(op, hnslb.CodeInvalidParameter, "invalid %s ID %q", kind, id)
	}
	return nil
}

// parseIP parses an address as HNS documents carry it; ok is false for junk.
func parseIP(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// checkSettings rejects policies whose settings are not a JSON object, which
// HNS cannot parse.
func checkSettings(op Op, code hnslb.ErrorCode, what string, raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return hnsError(op, code, "%s settings are not a JSON object: %v", what, err)
	}
	return nil
}
