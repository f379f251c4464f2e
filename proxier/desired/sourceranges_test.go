package desired

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func sourceRanges(cidrs ...string) svcOpt {
	return func(s *v1.Service) { s.Spec.LoadBalancerSourceRanges = cidrs }
}

// TestLoadBalancerSourceRangesAreReported: HNS load balancers have no
// source filter, so an ingress IP this node programs is open to every
// client whatever spec.loadBalancerSourceRanges says. kube-proxy's Linux
// proxiers filter it, winkernel says nothing; hnsproxy says so on the
// Service. The ranges are read as kube-proxy reads them (trimmed, by
// family, a zero-length prefix meaning "allow any"), and the load balancers
// are the same with or without them.
func TestLoadBalancerSourceRangesAreReported(t *testing.T) {
	lbSvc := func(opts ...svcOpt) *v1.Service {
		return service("web", append([]svcOpt{nodePorts(30080), loadBalancer(ingressIP("198.51.100.7"))}, opts...)...)
	}
	dualStack := func(s *v1.Service) { clusterIPs("10.0.0.1", "fd00::1")(s) }
	for _, tc := range []struct {
		name string
		svc  *v1.Service
		// says: parts of the one problem's message; none: no problem.
		says []string
		not  string
	}{{
		name: "ranges of the ingress IP's family: reported, naming the ingress IP and the ranges",
		svc:  lbSvc(sourceRanges("203.0.113.0/24", "192.0.2.8/32")),
		says: []string{"198.51.100.7", "203.0.113.0/24, 192.0.2.8/32", "not filtered"},
	}, {
		name: "padded with blanks, as the API lets through: read trimmed",
		svc:  lbSvc(sourceRanges(" 203.0.113.0/24 ")),
		says: []string{"198.51.100.7", ": 203.0.113.0/24"},
	}, {
		name: "several ingress IPs: the first named, the rest counted",
		svc:  lbSvc(sourceRanges("203.0.113.0/24"), loadBalancer(ingressIP("198.51.100.7"), ingressIP("198.51.100.8"), ingressIP("198.51.100.9"))),
		says: []string{"198.51.100.7 and 2 more"},
	}, {
		name: "a zero-length prefix among them allows any client: nothing to enforce",
		svc:  lbSvc(sourceRanges("203.0.113.0/24", "0.0.0.0/0")),
	}, {
		name: "ranges of the other family only: kube-proxy filters no IPv4 ingress either",
		svc:  lbSvc(sourceRanges("2001:db8::/64")),
	}, {
		name: "unparsable ranges are ignored, as kube-proxy ignores them",
		svc:  lbSvc(sourceRanges("not-a-cidr", "")),
	}, {
		name: "no ingress IP (external IPs, node ports): the ranges never apply",
		svc:  service("web", nodePorts(30080), externalIPs("203.0.113.5"), sourceRanges("203.0.113.0/24")),
	}, {
		name: "an ipMode Proxy ingress IP gets no load balancer here: nothing is open on it",
		svc:  lbSvc(sourceRanges("203.0.113.0/24"), loadBalancer(v1.LoadBalancerIngress{IP: "198.51.100.7", IPMode: ptr(v1.LoadBalancerIPModeProxy)})),
	}, {
		name: "dual stack: the IPv6 ingress IP with IPv6 ranges is named, not the IPv4 one its family's zero prefix opens",
		svc:  lbSvc(dualStack, sourceRanges("2001:db8::/64", "0.0.0.0/0"), loadBalancer(ingressIP("198.51.100.7"), ingressIP("2001:db8::7"))),
		says: []string{"2001:db8::7", ": 2001:db8::/64"},
		not:  "198.51.100.7",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			in := func(svc *v1.Service) ServiceResult {
				return ForService(ServiceInput{Service: svc, Slices: slicesOf(twoEndpoints()...)}, config())
			}
			r := in(tc.svc)
			open := tc.svc.DeepCopy()
			open.Spec.LoadBalancerSourceRanges = nil
			if want := in(open); dump(ServiceResult{LBs: r.LBs}) != dump(want) || len(want.Problems) != 0 {
				t.Errorf("load balancers differ from the Service's without ranges:\n got %s\nwant %s", dump(r), dump(want))
			}
			want := ""
			if tc.says != nil {
				want = ReasonSourceRangesIgnored
			}
			if got := reasons(r.Problems); got != want {
				t.Fatalf("problems = %q, want %q (%+v)", got, want, r.Problems)
			}
			for _, p := range r.Problems {
				if !p.Warning {
					t.Errorf("%s is not a Warning", p.Reason)
				}
				for _, part := range tc.says {
					if !strings.Contains(p.Message, part) {
						t.Errorf("message %q does not say %q", p.Message, part)
					}
				}
				if tc.not != "" && strings.Contains(p.Message, tc.not) {
					t.Errorf("message %q names %s", p.Message, tc.not)
				}
			}
		})
	}
}
