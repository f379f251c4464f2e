//go:build windows

package hcnclient

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/Microsoft/hcsshim/hcn"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// The field-by-field conversions of load balancers give what convert's JSON
// round trip gives, for every field, both ways, and share nothing with
// their source.
func TestLoadBalancerConversionMatchesJSON(t *testing.T) {
	fullOurs, fullHcn := new(hnslb.LoadBalancer), new(hcn.HostComputeLoadBalancer)
	fill(reflect.ValueOf(fullOurs).Elem(), "")
	fill(reflect.ValueOf(fullHcn).Elem(), "")
	ours := []*hnslb.LoadBalancer{
		fullOurs, nil, {},
		benchLoadBalancer(3),
		{HostComputeEndpoints: []string{}, FrontendVIPs: []string{}, PortMappings: []hnslb.PortMapping{}},
		{ID: "<&> ünïcode", SourceVIP: "fd00::2", Flags: hnslb.LoadBalancerFlagsIPv6 | hnslb.LoadBalancerFlagsDSR,
			PortMappings: []hnslb.PortMapping{{Protocol: 17, ExternalPort: 53}, {Flags: hnslb.PortMappingFlagsILB}}},
	}
	assertConvertsAsJSON(t, toHcnLoadBalancer, ours...)
	assertConvertsAsJSON(t, fromHcnLoadBalancer,
		fullHcn, nil, &hcn.HostComputeLoadBalancer{},
		&hcn.HostComputeLoadBalancer{HostComputeEndpoints: []string{}, PortMappings: []hcn.LoadBalancerPortMapping{}})

	// Nothing shared: changing the source after does not change the copy.
	src := benchLoadBalancer(2)
	src.FrontendVIPs = []string{"10.96.0.10"}
	h, _ := toHcnLoadBalancer(src)
	src.HostComputeEndpoints[0], src.FrontendVIPs[0] = "changed", "changed"
	back, _ := fromHcnLoadBalancer(h)
	h.HostComputeEndpoints[1], h.FrontendVIPs[0] = "changed", "changed"
	if back.HostComputeEndpoints[0] == "changed" || back.HostComputeEndpoints[1] == "changed" || back.FrontendVIPs[0] == "changed" {
		t.Errorf("a conversion shares its source's lists: %+v", back)
	}
}

// assertConvertsAsJSON checks that conv gives what convert's round trip
// gives for each of objs.
func assertConvertsAsJSON[From, To any](t *testing.T, conv func(*From) (*To, error), objs ...*From) {
	t.Helper()
	for _, o := range objs {
		direct, _ := conv(o)
		viaJSON, err := convert[To](o)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(direct, viaJSON) {
			t.Errorf("%T of %+v:\n direct    %+v\n via JSON  %+v", direct, o, direct, viaJSON)
		}
	}
}

// A string that is not UTF-8 reaches HNS as the round trip sent it: hcn's
// own encoding replaces the bad bytes (escaped, where the round trip sent
// them replaced already: the same JSON value).
func TestLoadBalancerConversionSendsInvalidUTF8AsJSONDid(t *testing.T) {
	lb := &hnslb.LoadBalancer{ID: "bad\xffid", SourceVIP: "\xc3", HostComputeEndpoints: []string{"e\xfe"}}
	direct, _ := toHcnLoadBalancer(lb)
	viaJSON, err := convert[hcn.HostComputeLoadBalancer](lb)
	if err != nil {
		t.Fatal(err)
	}
	var sent, sentBefore hnslb.LoadBalancer
	if err := json.Unmarshal(mustJSON(t, direct), &sent); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mustJSON(t, viaJSON), &sentBefore); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sent, sentBefore) || sent.ID != "bad\uFFFDid" {
		t.Errorf("sent %+v, the round trip sent %+v", sent, sentBefore)
	}
}
