package intent

// Origin says who chose a load balancer's frontend. It decides who wins a
// frontend two Services want (Rank) and whether hnsproxy may ever remove a
// foreign load balancer that holds it (TenantChosen); see
// docs/reliability.md, "Frontend ownership".
type Origin uint8

const (
	// OriginUnknown is the zero value: trusted least (ranked last, never
	// allocated), so a load balancer built without an origin gains nothing.
	OriginUnknown Origin = iota
	// OriginClusterIP: the Service's cluster IP, allocated by the apiserver
	// (unique among Services).
	OriginClusterIP
	// OriginNodePort: the node port, allocated by the apiserver (unique
	// among Services).
	OriginNodePort
	// OriginIngress: a status.loadBalancer.ingress IP, written by a
	// load-balancer controller through the status subresource.
	OriginIngress
	// OriginExternalIP: spec.externalIPs, chosen by whoever may edit the
	// Service: a namespace user.
	OriginExternalIP
	// OriginHealthCheck: a load-balancer ingress IP's health-check port
	// (--forward-healthcheck-vip): the IP written as OriginIngress's is,
	// so ranked and trusted as those are.
	OriginHealthCheck
)

// Rank orders claims on one frontend: lower wins. Frontends the apiserver
// allocates outrank those a controller writes, which outrank those a
// tenant types in, whatever the Services' ages.
func (o Origin) Rank() int {
	switch o {
	case OriginClusterIP, OriginNodePort:
		return 0
	case OriginIngress, OriginHealthCheck:
		return 1
	case OriginExternalIP:
		return 2
	}
	return 3
}

// TenantChosen reports a frontend any namespace user may set to any address.
func (o Origin) TenantChosen() bool { return o == OriginExternalIP }

func (o Origin) String() string {
	switch o {
	case OriginClusterIP:
		return "cluster IP"
	case OriginNodePort:
		return "node port"
	case OriginIngress:
		return "load-balancer ingress IP"
	case OriginExternalIP:
		return "external IP"
	case OriginHealthCheck:
		return "load-balancer ingress IP's health check"
	}
	return "unknown origin"
}

// Allocated reports a frontend the apiserver allocates to one Service
// alone: a foreign load balancer holding it can only be a leftover.
func (o Origin) Allocated() bool { return o == OriginClusterIP || o == OriginNodePort }
