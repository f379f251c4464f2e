package sim

import (
	"encoding/json"
	"net/netip"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// checkID rejects what is not a GUID, as hcn does before it calls HNS
// (errInvalidLoadBalancerID and friends in hcn/hcnerrors.go). It is an
// invalid parameter, never "not found".
func checkID(op Op, kind, id string) error {
	if !hnslb.IsGUID(id) {
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
