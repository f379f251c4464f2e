package reconciler

import (
	"encoding/json"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// TestPublishedEchoesReadAsWritten: load balancers HNS answered kube-proxy
// with, as kube-proxy logged them (hcn's struct marshalled again: HNS's
// values in hcn's spelling), decode into hnslb's types and encode back to
// the same bytes, give the frontend key they were made for, and are adopted
// as the document hnsproxy writes for the same Service, whatever case the
// backend GUIDs it knows are in and although hnsproxy sets VipExternalIP
// on a NodePort where kube-proxy's echo shows only LocalRoutedVIP.
func TestPublishedEchoesReadAsWritten(t *testing.T) {
	for _, c := range []struct {
		source   string
		echo     string
		want     intent.LB
		backends []string // the backends' IDs as hnsproxy knows them
	}{{
		// "Kube-proxy Windows Kernelspace Mode", 2021-12-18 (github.com/knabben/blog
		// content/2021/1218), JSON compacted; the backend IDs as the same post's
		// Get-HNSEndpoint prints them.
		source: "knabben blog 2021-12-18",
		echo: `{"ID":"a335d997-4160-44f9-9f72-1087a2cba45e","HostComputeEndpoints":["028abaed-7ff6-4fdc-992c-d3b004936be0",` +
			`"e84bad42-a6ee-40a8-8145-c9f084654774","77c53bac-a359-45cc-a663-541344ee505a"],"SourceVIP":"100.244.206.66",` +
			`"FrontendVIPs":["10.99.234.145"],"PortMappings":[{"Protocol":6,"InternalPort":8080,"ExternalPort":80}],` +
			`"SchemaVersion":{"Major":2,"Minor":0}}`,
		want: intent.LB{Key: intent.LBKey{Family: intent.IPv4, VIP: "10.99.234.145", Protocol: hnslb.ProtocolTCP, Port: 80},
			SourceVIP: "100.244.206.66", InternalPort: 8080},
		backends: []string{"77C53BAC-A359-45CC-A663-541344EE505A", "028ABAED-7FF6-4FDC-992C-D3B004936BE0", "E84BAD42-A6EE-40A8-8145-C9F084654774"},
	}, {
		source: "projectcalico/calico#7305",
		echo: `{"ID":"0be07c06-353c-4fbf-8ebc-5531f877e68a","HostComputeEndpoints":["fd6bec0f-7b88-4b61-b5af-70897ab0960b"],` +
			`"SourceVIP":"10.10.253.194","PortMappings":[{"Protocol":6,"InternalPort":80,"ExternalPort":31416,"Flags":2}],` +
			`"SchemaVersion":{"Major":2,"Minor":0}}`,
		want: intent.LB{Key: intent.LBKey{Family: intent.IPv4, Protocol: hnslb.ProtocolTCP, Port: 31416},
			SourceVIP: "10.10.253.194", InternalPort: 80,
			PortFlags: hnslb.PortMappingFlagsLocalRoutedVIP | hnslb.PortMappingFlagsVipExternalIP},
		backends: []string{"fd6bec0f-7b88-4b61-b5af-70897ab0960b"},
	}} {
		t.Run(c.source, func(t *testing.T) {
			var echo hnslb.LoadBalancer
			if err := json.Unmarshal([]byte(c.echo), &echo); err != nil {
				t.Fatal(err)
			}
			if raw, err := json.Marshal(&echo); err != nil || string(raw) != c.echo {
				t.Errorf("encoded again: %s (%v)", raw, err)
			}
			if k, ok := KeyOf(&echo); !ok || k != c.want.Key {
				t.Errorf("KeyOf = %v, %v; want %v", k, ok, c.want.Key)
			}
			if written := BuildLB(&c.want, c.backends); !adoptionMatch(&echo, written) {
				t.Errorf("not adopted as what hnsproxy writes:\n echo    %+v\n written %+v", echo, *written)
			}
		})
	}
}
