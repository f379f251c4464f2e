package cni

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/version"
)

// parseReleaseConfig is parseConfig for DEL. containerd hands DEL the
// configuration it reads now, not the one the pod was added with, and the
// spec asks DEL to complete whatever else is wrong. DEL reads only the
// network's name, ipam, hnsEndpoint and prevResult, so a configuration ADD
// refuses for anything else (a misspelt field, a bad CIDR or policy, an
// unknown mode, a prevResult that does not parse) still releases the pod,
// with a warning naming the refusal; so does one whose mode the network's
// type does not match, which only HNS tells (anyNetworkType).
func parseReleaseConfig(stdin []byte) (*NetConf, error) {
	n, err := parseConfig(stdin)
	if err == nil {
		n.anyNetworkType = true
		return n, nil
	}
	var refused *types.Error
	if !errors.As(err, &refused) || refused.Code != types.ErrInvalidNetworkConfig && refused.Code != types.ErrDecodingFailure {
		return nil, err
	}
	// What does not decode at all stays refused, and so does a field DEL
	// reads that has the wrong JSON type; one DEL does not read ("loopbackDSR":
	// "true") is skipped, as the decoder skips it. A prevResult that does
	// not parse is only a fallback's input (releasePodCIDR).
	n = &NetConf{}
	if decodeErr := json.Unmarshal(stdin, n); decodeErr != nil {
		var wrongType *json.UnmarshalTypeError
		if !errors.As(decodeErr, &wrongType) || json.Unmarshal(stdin, &releaseFields{}) != nil {
			return nil, err
		}
	}
	if n.Network == "" {
		n.Network = n.Name
	}
	if n.Network == "" {
		return nil, err
	}
	if n.RawPrevResult != nil && version.ParsePrevResult(&n.PluginConf) != nil {
		n.PrevResult = nil
	}
	n.warnings = []string{fmt.Sprintf("configuration refused for ADD (%s); DEL removes the pod all the same", refused.Msg)}
	n.anyNetworkType = true
	return n, nil
}

// releaseFields are the fields DEL reads, to tell a wrong type in one of
// them from one in a field DEL ignores (encoding/json names only the first
// field it skipped).
type releaseFields struct {
	CNIVersion  string     `json:"cniVersion"`
	Name        string     `json:"name"`
	Type        string     `json:"type"`
	Network     string     `json:"network"`
	HNSEndpoint string     `json:"hnsEndpoint"`
	IPAM        types.IPAM `json:"ipam"`
}
