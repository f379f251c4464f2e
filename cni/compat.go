package cni

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/containernetworking/cni/pkg/types"
)

// family is which reference plugins a configuration was written for; it
// decides the few places where they behave differently (docs/cni.md).
type family int

const (
	// familyNative: hnscni's own fields only.
	familyNative family = iota
	// familyWin: containernetworking's win-bridge and win-overlay
	// ("policies", "apiVersion", "ipMasq", "ipMasqNetwork", "endpointMacPrefix").
	familyWin
	// familySDN: Microsoft's sdnbridge and sdnoverlay ("AdditionalArgs",
	// "optionalFlags", "additionalRoutes").
	familySDN
)

// pluginModes maps the reference plugins' names, as a config's "type"
// carries them when hnscni is installed under that name, to a mode.
// sdnbridge/sdnoverlay also take the HNS network type as "type".
var pluginModes = map[string]struct {
	mode string
	fam  family
}{
	"win-bridge":  {ModeL2Bridge, familyWin},
	"win-overlay": {ModeOverlay, familyWin},
	"sdnbridge":   {ModeL2Bridge, familySDN},
	"sdnoverlay":  {ModeOverlay, familySDN},
	"l2bridge":    {ModeL2Bridge, familySDN},
	"overlay":     {ModeOverlay, familySDN},
	// Calico for Windows writes win-* policies; its "mode" names the network
	// type. Its DNS rule is its own (NetConf.calicoDNS).
	calicoType: {"", familyWin},
}

// calicoType is Calico's plugin name, as its configurations' "type" gives it.
const calicoType = "calico"

// modeAliases are the "mode" values hnscni takes: its own, and Calico's
// Windows backends (windows-bgp runs on an L2Bridge network, vxlan on an
// Overlay one).
var modeAliases = map[string]string{
	ModeL2Bridge:  ModeL2Bridge,
	ModeOverlay:   ModeOverlay,
	"windows-bgp": ModeL2Bridge,
	"vxlan":       ModeOverlay,
}

// referenceFields are the reference plugins' configuration fields. Field
// names match as the reference plugins' encoding/json matches them: case
// does not matter ("AdditionalArgs" and "additionalArgs" are one field).
type referenceFields struct {
	// APIVersion (win-*) 1 or 2: the HNS API the policies were written
	// for. hnscni always speaks HNS v2 and reads each policy in the form it
	// is written in (v1 flat, or v2 {"Type", "Settings"}).
	APIVersion int `json:"apiVersion,omitempty"`
	// Policies (win-*) and AdditionalArgs (sdn*): {"name", "value"} pairs;
	// "EndpointPolicy" values go on the endpoint, and for sdn*
	// "NetworkPolicy" values on a network hnscni creates.
	Policies       []policyArg `json:"policies,omitempty"`
	AdditionalArgs []policyArg `json:"AdditionalArgs,omitempty"`
	// OptionalFlags (sdn*).
	OptionalFlags OptionalFlags `json:"optionalFlags,omitempty"`
	// AdditionalRoutes (sdn*) give the default gateway with
	// optionalFlags.gatewayFromAdditionalRoutes.
	AdditionalRoutes []types.Route `json:"additionalRoutes,omitempty"`
	// IPMasq (win-overlay): NAT everything but the node's pod subnet.
	// Flannel sets both on every delegate; sdnbridge/sdnoverlay ignore
	// them, and so does hnscni for that family.
	IPMasq bool `json:"ipMasq,omitempty"`
	// IPMasqNetwork (win-bridge): a CIDR exempt from outbound NAT.
	IPMasqNetwork string `json:"ipMasqNetwork,omitempty"`
	// EndpointMacPrefix (win-overlay) "xx-xx": the first two bytes of the
	// MAC derived from the pod's address; default 0E-2A.
	EndpointMacPrefix string `json:"endpointMacPrefix,omitempty"`
	// Calico for Windows' equivalents.
	CalicoVNI         uint32 `json:"vxlan_vni,omitempty"`
	CalicoMacPrefix   string `json:"vxlan_mac_prefix,omitempty"`
	CalicoLoopbackDSR bool   `json:"windows_loopback_DSR,omitempty"`
}

// OptionalFlags are sdnbridge/sdnoverlay's "optionalFlags".
type OptionalFlags struct {
	LocalRoutedPortMapping      bool `json:"localRoutedPortMapping,omitempty"`
	AllowACLPortMapping         bool `json:"allowAclPortMapping,omitempty"`
	ForceBridgeGateway          bool `json:"forceBridgeGateway,omitempty"`
	EnableDualStack             bool `json:"enableDualStack,omitempty"`
	LoopbackDSR                 bool `json:"loopbackDSR,omitempty"`
	GatewayFromAdditionalRoutes bool `json:"gatewayFromAdditionalRoutes,omitempty"`
}

// policyArg is one {"name", "value"} entry of "policies" or "AdditionalArgs".
type policyArg struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// familyOf tells which reference plugins a configuration was written for:
// by the plugin name it runs under, else by the fields it uses.
func familyOf(n *NetConf) family {
	if pm, ok := pluginModes[strings.ToLower(n.Type)]; ok {
		return pm.fam
	}
	switch {
	case len(n.AdditionalArgs) > 0 || n.OptionalFlags != (OptionalFlags{}) || len(n.AdditionalRoutes) > 0:
		return familySDN
	case len(n.Policies) > 0 || n.APIVersion != 0 || n.IPMasq || n.IPMasqNetwork != "" || n.EndpointMacPrefix != "":
		return familyWin
	}
	return familyNative
}

// modeOf is the configured mode: "mode", else the plugin name's, else ""
// (the HNS network's type decides).
func modeOf(n *NetConf) (string, error) {
	if n.Mode != "" {
		m, ok := modeAliases[strings.ToLower(n.Mode)]
		if !ok {
			return "", invalidConfig("unknown mode %q: want %q or %q (or Calico's windows-bgp, vxlan), or leave it out to use the HNS network's type", n.Mode, ModeL2Bridge, ModeOverlay)
		}
		return m, nil
	}
	return pluginModes[strings.ToLower(n.Type)].mode, nil
}

// parseReferenceFields validates the reference plugins' fields and
// decodes their policies.
func (n *NetConf) parseReferenceFields() error {
	switch n.APIVersion {
	case 0, 1, 2:
	default:
		return invalidConfig("apiVersion %d: want 1 (HNS v1 policies) or 2 (HNS v2 policies)", n.APIVersion)
	}
	if n.OptionalFlags.LoopbackDSR || n.CalicoLoopbackDSR {
		n.LoopbackDSR = true
	}
	if n.IPMasqNetwork != "" {
		if _, err := optionalPrefix("ipMasqNetwork", n.IPMasqNetwork); err != nil {
			return err
		}
	}
	n.macPrefix = "0E-2A"
	for _, f := range []struct{ field, prefix string }{{"vxlan_mac_prefix", n.CalicoMacPrefix}, {"endpointMacPrefix", n.EndpointMacPrefix}} {
		if f.prefix == "" {
			continue
		}
		if !validMacPrefix(f.prefix) {
			return invalidConfig("%s %q: want two hex bytes as xx-xx", f.field, f.prefix)
		}
		n.macPrefix = strings.ToUpper(f.prefix)
	}
	// win-*: any name equal to EndpointPolicy ignoring case.
	for i, a := range n.Policies {
		if !strings.EqualFold(a.Name, "EndpointPolicy") {
			n.warnings = append(n.warnings, fmt.Sprintf("policies[%d]: name %q is not EndpointPolicy; ignored, as win-bridge/win-overlay do", i, a.Name))
			continue
		}
		p, err := decodePolicy(fmt.Sprintf("policies[%d]", i), a.Value)
		if err != nil {
			return err
		}
		n.configPolicies = append(n.configPolicies, p)
	}
	// sdn*: exact names, as sdnbridge/sdnoverlay compare them.
	for i, a := range n.AdditionalArgs {
		where := fmt.Sprintf("AdditionalArgs[%d]", i)
		switch a.Name {
		case "EndpointPolicy":
			p, err := decodePolicy(where, a.Value)
			if err != nil {
				return err
			}
			n.configPolicies = append(n.configPolicies, p)
		case "NetworkPolicy":
			if !json.Valid(a.Value) {
				return invalidConfig("%s: value is not JSON", where)
			}
			n.networkPolicies = append(n.networkPolicies, a.Value)
		default:
			n.warnings = append(n.warnings, fmt.Sprintf("%s: name %q is neither EndpointPolicy nor NetworkPolicy; ignored, as sdnbridge/sdnoverlay do", where, a.Name))
		}
	}
	return nil
}

func validMacPrefix(p string) bool {
	if len(p) != 5 || p[2] != '-' {
		return false
	}
	_, err := strconv.ParseUint(p[:2]+p[3:], 16, 16)
	return err == nil
}
