package desired

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// TestHealthCheckCountsWhatKubeProxyCounts: the health-check node port
// answers with kube-proxy's count (EndpointsMap.LocalReadyEndpoints): this
// node's ready endpoints, after duplicates across slices are settled, by
// the slice's nodeName alone.
func TestHealthCheckCountsWhatKubeProxyCounts(t *testing.T) {
	lbSvc := service("web", nodePorts(30080), loadBalancer(ingressIP("198.51.100.7")), etpLocal(32000))
	// publishNotReadyAddresses: the EndpointSlice controller keeps a
	// terminating pod ready (and serving while the pod is).
	readyTerminating := conditions(true, true, true)
	for _, tc := range []struct {
		name   string
		svc    *v1.Service // lbSvc when nil
		slices []*discoveryv1.EndpointSlice
		// local is the count; ingress the ingress load balancer's backends ("" none).
		local   int
		ingress string
	}{{
		name:    "only terminating local endpoints: they serve, the check says 0 so the cloud drains the node",
		slices:  one(ep("10.1.0.2", local, servingTerminating), ep("10.1.0.3")),
		ingress: "10.1.0.2",
	}, {
		name:    "publishNotReadyAddresses: a terminating pod is still ready, and counted",
		slices:  one(ep("10.1.0.2", local, readyTerminating), ep("10.1.0.3")),
		local:   1,
		ingress: "10.1.0.2",
	}, {
		name: "a reused IP: the new pod's copy wins, the terminating pod is not counted",
		slices: []*discoveryv1.EndpointSlice{
			slice("web-a", 8080, ep("10.1.0.2", local, readyTerminating)),
			slice("web-b", 8080, ep("10.1.0.2", local, notReady), ep("10.1.0.3")),
		},
	}, {
		name: "a reused IP whose new pod is ready: counted once",
		slices: []*discoveryv1.EndpointSlice{
			slice("web-a", 8080, ep("10.1.0.2", local, readyTerminating)),
			slice("web-b", 8080, ep("10.1.0.2", local), ep("10.1.0.3")),
		},
		local:   1,
		ingress: "10.1.0.2",
	}, {
		// kube-proxy settles duplicates per Service port: the terminating
		// copy is the only one on port metrics, whose load balancer takes it.
		name: "a reused IP on another Service port: each port settles its own duplicates",
		svc: service("web", ports(tcpPort("http", 80), tcpPort("metrics", 9100)), nodePorts(30080, 30091),
			loadBalancer(ingressIP("198.51.100.7")), etpLocal(32000)),
		slices: []*discoveryv1.EndpointSlice{
			sliceWithPorts("web-a", []discoveryv1.EndpointPort{slicePort("metrics", 9100, v1.ProtocolTCP)},
				ep("10.1.0.2", local, readyTerminating)),
			slice("web-b", 8080, ep("10.1.0.2", local, notReady), ep("10.1.0.3")),
		},
		local: 1,
	}, {
		// kube-proxy counts a Service's local IPs, not its IP:port pairs
		// (EndpointsMap.LocalReadyEndpoints squashes ports), so a pod
		// serving both ports of a two-port Service is one endpoint.
		name: "a local pod behind two Service ports counts once",
		svc: service("web", ports(tcpPort("http", 80), tcpPort("metrics", 9100)), nodePorts(30080, 30091),
			loadBalancer(ingressIP("198.51.100.7")), etpLocal(32000)),
		slices: []*discoveryv1.EndpointSlice{
			sliceWithPorts("web-a", []discoveryv1.EndpointPort{slicePort("http", 8080, v1.ProtocolTCP), slicePort("metrics", 9100, v1.ProtocolTCP)},
				ep("10.1.0.2", local), ep("10.1.0.4", local), ep("10.1.0.3")),
		},
		local:   2,
		ingress: "10.1.0.2,10.1.0.4",
	}, {
		// A rollout changing the container port behind a named target port:
		// the load balancers carry the port most ready endpoints use, so
		// this node's new pod on the other port has none, and a count of 1
		// would draw the cloud's traffic to a node with no ingress load
		// balancer for it.
		name: "a local pod on the named target port's other number gets no load balancer and is not counted",
		slices: []*discoveryv1.EndpointSlice{
			slice("web-old", 8080, ep("10.1.0.3"), ep("10.1.0.4")),
			slice("web-new", 9090, ep("10.1.0.2", local)),
		},
	}, {
		name: "a pod on this node whose slice endpoint has no nodeName is not local",
		slices: one(func() discoveryv1.Endpoint {
			e := ep("10.1.0.2")
			e.NodeName = nil
			return e
		}()),
	}, {
		name:   "hints naming this node do not make an endpoint local",
		slices: one(ep("10.1.0.2", nodeHints(thisNode))),
	}, {
		name: "an endpoint with several addresses is its first",
		slices: one(func() discoveryv1.Endpoint {
			e := ep("10.1.0.2", local)
			e.Addresses = append(e.Addresses, "10.1.0.9")
			return e
		}()),
		local:   1,
		ingress: "10.1.0.2",
	}, {
		name: "FQDN slices count nothing",
		slices: []*discoveryv1.EndpointSlice{{AddressType: discoveryv1.AddressTypeFQDN,
			Ports:     []discoveryv1.EndpointPort{slicePort("http", 8080, v1.ProtocolTCP)},
			Endpoints: []discoveryv1.Endpoint{ep("web.example.com", local)}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			svc := tc.svc
			if svc == nil {
				svc = lbSvc
			}
			r := ForService(ServiceInput{Service: svc, Slices: slicesOf(tc.slices...)}, config())
			if r.HealthCheck == nil || *r.HealthCheck != (HealthCheck{NodePort: 32000, LocalIPv4: tc.local}) {
				t.Errorf("health check = %+v, want %d local endpoints\n%s", r.HealthCheck, tc.local, dump(r))
			}
			got := ""
			for _, lb := range r.LBs {
				if lb.Key == key("198.51.100.7", 80) {
					got = backendIPs(lb)
				}
			}
			if got != tc.ingress {
				t.Errorf("ingress backends = %q, want %q\n%s", got, tc.ingress, dump(r))
			}
		})
	}
}
