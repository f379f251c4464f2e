package options

import (
	"fmt"
	"strings"

	"github.com/hnsproxy/hnsproxy/internal/kubeip"
)

// clusterCIDRs reads --cluster-cidr (clusterCIDR) leniently. kube-proxy on
// Windows never uses it and validates it only under a detectLocalMode
// ClusterCIDR set explicitly (Windows does not default to it), so no value
// may stop hnsproxy; it only picks the IP families of the metrics'
// ip_family label and of the health-check node ports' listeners. Entries are trimmed; one that is not
// a CIDR, or a second of an IP family, is left out with a warning.
func clusterCIDRs(value string) ([]string, []string) {
	var cidrs, warnings []string
	seen := map[bool]string{} // IPv6? -> the CIDR kept
	for _, entry := range strings.Split(value, ",") {
		c := strings.TrimSpace(entry)
		if c == "" {
			continue
		}
		p, ok := kubeip.ParsePrefix(c)
		if !ok {
			warnings = append(warnings, fmt.Sprintf("clusterCIDR %q is not a CIDR; ignored (hnsproxy reads clusterCIDR only for the IP families it reports and listens on)", c))
			continue
		}
		v6 := !p.Addr().Unmap().Is4()
		if kept, ok := seen[v6]; ok {
			warnings = append(warnings, fmt.Sprintf("clusterCIDR %q is a second CIDR of the IP family of %q; ignored (hnsproxy reads clusterCIDR only for the IP families it reports and listens on)", c, kept))
			continue
		}
		seen[v6] = c
		cidrs = append(cidrs, c)
	}
	return cidrs, warnings
}
