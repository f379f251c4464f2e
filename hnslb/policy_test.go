package hnslb_test

import (
	"encoding/json"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// The VSID policy is stored raw in Subnet.Policies, so its bytes are what
// HNS (and hcn's SubnetPolicy{Type, Settings}) sees.
func TestNewVSIDSubnetPolicy(t *testing.T) {
	for vni, want := range map[uint32]string{
		4096: `{"Type":"VSID","Settings":{"IsolationId":4096}}`,
		0:    `{"Type":"VSID","Settings":{"IsolationId":0}}`,
	} {
		if got := string(hnslb.NewVSIDSubnetPolicy(vni)); got != want {
			t.Errorf("NewVSIDSubnetPolicy(%d) = %s, want %s", vni, got, want)
		}
	}
}

// NewProviderAddressPolicy writes the bytes encoding/json writes, and
// Endpoint.ProviderAddress reads back what encoding/json reads, for plain
// addresses and for text the shortcuts leave to encoding/json.
func TestProviderAddressPolicyMatchesEncodingJSON(t *testing.T) {
	for _, pa := range []string{"", "10.0.0.1", "192.168.255.254", "fd00::1", "FD00:0:0::AbC", "::", "a\"b", "<10.0.0.1>", "10.0.0.1\n", "é", `\u0031`} {
		want, err := json.Marshal(hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: pa})
		if err != nil {
			t.Fatal(err)
		}
		p := hnslb.NewProviderAddressPolicy(pa)
		if p.Type != hnslb.EndpointPolicyProviderAddress || string(p.Settings) != string(want) {
			t.Errorf("NewProviderAddressPolicy(%q) = %s %s, want %s %s", pa, p.Type, p.Settings, hnslb.EndpointPolicyProviderAddress, want)
		}
		if got := (&hnslb.Endpoint{Policies: []hnslb.EndpointPolicy{p}}).ProviderAddress(); got != pa {
			t.Errorf("ProviderAddress of %s = %q, want %q", p.Settings, got, pa)
		}
	}
	// Settings in other forms (as HNS may echo them) are read as encoding/json reads them.
	for raw, want := range map[string]string{
		`{"ProviderAddress":"10.0.0.1"}`:               "10.0.0.1",
		`{ "ProviderAddress": "10.0.0.1" }`:            "10.0.0.1",
		`{"providerAddress":"10.0.0.1"}`:               "10.0.0.1",
		`{"ProviderAddress":"10.0.0.1","Other":1}`:     "10.0.0.1",
		`{"ProviderAddress":"10.0.0.\u0031"}`:          "10.0.0.1",
		`{"ProviderAddress":"10.0.0.1"}{"x":"y"}`:      "",
		`{"ProviderAddress":""}`:                       "",
		`{"ProviderAddress":"10.0.0.1","X":"1.2.3.4"}`: "10.0.0.1",
	} {
		ep := hnslb.Endpoint{Policies: []hnslb.EndpointPolicy{{Type: hnslb.EndpointPolicyProviderAddress, Settings: json.RawMessage(raw)}}}
		if got := ep.ProviderAddress(); got != want {
			t.Errorf("ProviderAddress of %s = %q, want %q", raw, got, want)
		}
	}
}
