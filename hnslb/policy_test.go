package hnslb_test

import (
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
