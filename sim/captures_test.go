package sim

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// publishedEcho is a load balancer HNS answered a create with, as
// kube-proxy logged it (hcn's HostComputeLoadBalancer marshalled again, so
// the bytes are hcn's, the values HNS's), and the backends' addresses.
type publishedEcho struct {
	source   string
	json     string
	backends []string // addresses of HostComputeEndpoints, in order
	subnet   string
}

var publishedEchoes = []publishedEcho{{
	// A ClusterIP Service with three local backends and a source VIP:
	// "Kube-proxy Windows Kernelspace Mode", 2021-12-18 (github.com/knabben/blog
	// content/2021/1218), its JSON compacted.
	source: "knabben blog 2021-12-18",
	json: `{"ID":"a335d997-4160-44f9-9f72-1087a2cba45e","HostComputeEndpoints":["028abaed-7ff6-4fdc-992c-d3b004936be0",` +
		`"e84bad42-a6ee-40a8-8145-c9f084654774","77c53bac-a359-45cc-a663-541344ee505a"],"SourceVIP":"100.244.206.66",` +
		`"FrontendVIPs":["10.99.234.145"],"PortMappings":[{"Protocol":6,"InternalPort":8080,"ExternalPort":80}],` +
		`"SchemaVersion":{"Major":2,"Minor":0}}`,
	backends: []string{"100.244.206.68", "100.244.206.69", "100.244.206.70"},
	subnet:   "100.244.206.0/24",
}, {
	// A NodePort Service: no frontend VIP, port-mapping flag 2
	// (LocalRoutedVIP): projectcalico/calico#7305, 2023-11-07.
	source: "projectcalico/calico#7305",
	json: `{"ID":"0be07c06-353c-4fbf-8ebc-5531f877e68a","HostComputeEndpoints":["fd6bec0f-7b88-4b61-b5af-70897ab0960b"],` +
		`"SourceVIP":"10.10.253.194","PortMappings":[{"Protocol":6,"InternalPort":80,"ExternalPort":31416,"Flags":2}],` +
		`"SchemaVersion":{"Major":2,"Minor":0}}`,
	backends: []string{"10.10.253.10"},
	subnet:   "10.10.253.0/24",
}}

// TestCreateAnswersAsPublishedEchoes: a load balancer made from what a
// published echo shows is answered, with the default echo, in the same
// bytes, the simulator's GUIDs aside: lower-case IDs, backends in the order
// sent, source and frontend VIPs kept, no FrontendVIPs for a NodePort,
// flag 2 kept, schema 2.0, and nothing else.
func TestCreateAnswersAsPublishedEchoes(t *testing.T) {
	for _, c := range publishedEchoes {
		t.Run(c.source, func(t *testing.T) {
			var published hnslb.LoadBalancer
			if err := json.Unmarshal([]byte(c.json), &published); err != nil {
				t.Fatal(err)
			}
			h := newSim(t, ProfileWS2019)
			n, err := h.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge,
				Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: c.subnet}}}}})
			if err != nil {
				t.Fatal(err)
			}
			// The simulator's GUIDs stand for the published ones.
			var rename []string
			sent := published
			sent.ID, sent.SchemaVersion, sent.HostComputeEndpoints = "", hnslb.SchemaVersion{}, nil
			for i, ip := range c.backends {
				id := mustEndpoint(t, h, n.ID, endpointDoc(ip)).ID
				sent.HostComputeEndpoints = append(sent.HostComputeEndpoints, strings.ToUpper(id))
				rename = append(rename, id, published.HostComputeEndpoints[i])
			}
			got, err := h.CreateLoadBalancer(ctx, &sent)
			if err != nil {
				t.Fatal(err)
			}
			rename = append(rename, got.ID, published.ID)
			raw, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if answer := strings.NewReplacer(rename...).Replace(string(raw)); answer != c.json {
				t.Errorf("answered\n %s\nHNS answered\n %s", answer, c.json)
			}
		})
	}
}
