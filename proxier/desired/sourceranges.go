package desired

import (
	"strconv"
	"strings"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/internal/kubeip"
)

// sourceRanges reports spec.loadBalancerSourceRanges this node cannot
// enforce. kube-proxy's Linux proxiers drop traffic to a load-balancer
// ingress IP from outside the ranges of its family; an HNS load balancer
// has no source filter, so on a Windows node the ingress IP is open to
// every client that reaches it (winkernel ignores the ranges without a
// word). The ranges are read as kube-proxy reads them
// (proxyutil.MapCIDRsByIPFamily): trimmed, unparsable ones skipped, and a
// zero-length prefix of a family means any client of it, which is what
// HNS does anyway. The addresses come last, so a note cut to the API's
// length keeps the reason.
func (b *serviceBuilder) sourceRanges() {
	if len(b.svc.Spec.LoadBalancerSourceRanges) == 0 {
		return
	}
	var open, ranges []string
	for _, fam := range families {
		ips := b.ingressIPs.get(fam)
		if len(ips) == 0 {
			continue
		}
		var famRanges []string
		allowAny := false
		for _, s := range b.svc.Spec.LoadBalancerSourceRanges {
			s = strings.TrimSpace(s)
			p, ok := kubeip.ParsePrefix(s)
			if !ok || intent.FamilyOf(p.Addr()) != fam {
				continue
			}
			allowAny = allowAny || p.Bits() == 0
			famRanges = append(famRanges, s)
		}
		if allowAny || len(famRanges) == 0 {
			continue
		}
		for _, ip := range ips {
			open = append(open, ip.String())
		}
		ranges = append(ranges, famRanges...)
	}
	if len(open) == 0 {
		return
	}
	which := open[0]
	if len(open) > 1 {
		which += " and " + strconv.Itoa(len(open)-1) + " more"
	}
	b.problem(warn(ReasonSourceRangesIgnored,
		"HNS load balancers have no source filter: on this node, traffic to load-balancer ingress IP %s is not filtered by loadBalancerSourceRanges (the cloud load balancer or a network policy must filter): %s",
		which, strings.Join(ranges, ", ")))
}
