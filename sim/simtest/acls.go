// Package simtest holds what tests of several packages hand the simulator:
// documents other agents on a node write.
package simtest

import (
	"encoding/json"
	"fmt"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// aclSetting is the part of hcn's AclPolicySetting an agent's rule fills.
type aclSetting struct {
	ID              string `json:"Id"`
	Protocols       string `json:",omitempty"`
	Action          string
	Direction       string
	RemoteAddresses string `json:",omitempty"`
	RuleType        string
	Priority        uint16
}

// AgentACLs is a set of n ACL policies as a policy agent writes them: an
// allow from the node per rule, named tag-0 … tag-(n-1), then a block of the
// rest in each direction, so a set always holds n+2 entries.
func AgentACLs(tag string, n int) []hnslb.EndpointPolicy {
	var out []hnslb.EndpointPolicy
	add := func(s aclSetting) {
		raw, err := json.Marshal(s)
		if err != nil {
			panic(fmt.Sprintf("sim: marshal ACL settings: %v", err))
		}
		out = append(out, hnslb.EndpointPolicy{Type: hnslb.EndpointPolicyACL, Settings: raw})
	}
	for i := range n {
		add(aclSetting{ID: fmt.Sprintf("%s-%d", tag, i), Protocols: "6", Action: "Allow", Direction: "In",
			RemoteAddresses: fmt.Sprintf("10.0.%d.0/24", i), RuleType: "Switch", Priority: uint16(1000 + i)})
	}
	for _, dir := range []string{"In", "Out"} {
		add(aclSetting{ID: tag + "-default-" + dir, Action: "Block", Direction: dir, RuleType: "Switch", Priority: 65000})
	}
	return out
}
