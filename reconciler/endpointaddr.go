package reconciler

import "github.com/hnsproxy/hnsproxy/hnslb"

// canonicalEndpoint rewrites an endpoint HNS answered into the form the
// reconciler holds: its GUIDs lower-cased (guidcase.go), its addresses in
// their canonical text, the form hnsproxy keys remote endpoints by. HNS
// keeps an address as 16 bytes and may print an IPv6 one in another form
// than the one sent (sim.Echo.LongIPv6); read as printed, every restart
// took hnsproxy's own IPv6 remote endpoints for objects nobody wants, and
// deleted and recreated them with the load balancers using them.
// canonicalIP is the form load balancer VIPs are compared in too.
func canonicalEndpoint(ep *hnslb.Endpoint) {
	if ep == nil {
		return
	}
	lowerEndpointGUIDs(ep)
	copied := false
	for i, c := range ep.IpConfigurations {
		canon := canonicalIP(c.IpAddress)
		if canon == c.IpAddress {
			continue
		}
		if !copied { // the slice may be shared with the client's own copy
			ep.IpConfigurations = append([]hnslb.IPConfig(nil), ep.IpConfigurations...)
			copied = true
		}
		ep.IpConfigurations[i].IpAddress = canon
	}
}

// canonicalEndpoints is canonicalEndpoint for each of eps.
func canonicalEndpoints(eps []hnslb.Endpoint) {
	for i := range eps {
		canonicalEndpoint(&eps[i])
	}
}
