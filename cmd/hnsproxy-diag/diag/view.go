package diag

import (
	"net/netip"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// view is the inputs with the desired state computed and HNS indexed,
// shared by the table and the trace.
type view struct {
	in    *Inputs
	state *desired.State
	// endpoints are by lower-case ID: whether HNS answers a load
	// balancer's references in the case of its endpoint listing is not
	// known (docs/simulator.md, upper-guids).
	endpoints map[string]*hnslb.Endpoint
	byKey     map[intent.LBKey]*hnslb.LoadBalancer
	// odd are load balancers whose key is not hnsproxy's shape, or a second
	// one on a key (HNS refuses that; listed so nothing is hidden).
	odd    []*hnslb.LoadBalancer
	pods   map[netip.Addr]place
	nodeIP map[netip.Addr]string
	// frontends names the Service port behind a frontend.
	frontends frontends
	services  map[types.NamespacedName]*v1.Service
	// localAddrs are the addresses local endpoints hold (localHolds).
	localAddrs map[netip.Addr]struct{}
}

func newView(in *Inputs) *view {
	v := &view{
		in:        in,
		state:     desired.Compute(desired.InputsOf(in.Services, in.Slices), in.Config),
		endpoints: map[string]*hnslb.Endpoint{},
		byKey:     map[intent.LBKey]*hnslb.LoadBalancer{},
		pods:      in.podPlaces(),
		nodeIP:    in.nodeAddresses(),
		frontends: frontendsOf(in.Services),
		services:  make(map[types.NamespacedName]*v1.Service, len(in.Services)),
	}
	for i := range in.Services {
		s := &in.Services[i]
		v.services[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	for i := range in.HNS.Endpoints {
		v.endpoints[strings.ToLower(in.HNS.Endpoints[i].ID)] = &in.HNS.Endpoints[i]
	}
	for i := range in.HNS.LoadBalancers {
		lb := &in.HNS.LoadBalancers[i]
		k, ok := reconciler.KeyOf(lb)
		if _, dup := v.byKey[k]; !ok || dup {
			v.odd = append(v.odd, lb)
			continue
		}
		v.byKey[k] = lb
	}
	return v
}

// Owners of a load balancer in HNS.
const (
	OwnerHNSProxy = "hnsproxy" // in hnsproxy's state file
	OwnerForeign  = "foreign"  // not in it: another agent's, or made by hand
	OwnerUnknown  = "unknown"  // the state file could not be read
)

func (v *view) owner(id string) string {
	switch {
	case v.in.Owned == nil:
		return OwnerUnknown
	case v.in.Owned.LoadBalancer(id):
		return OwnerHNSProxy
	}
	return OwnerForeign
}

// backendIP is the address of a load balancer's backend endpoint in the
// load balancer's family; ok is false for an ID of no endpoint.
func (v *view) backendIP(id string, ipv6 bool) (netip.Addr, *hnslb.Endpoint, bool) {
	ep := v.endpoints[strings.ToLower(id)]
	if ep == nil {
		return netip.Addr{}, nil, false
	}
	for _, c := range ep.IpConfigurations {
		if ip, err := netip.ParseAddr(c.IpAddress); err == nil && ip.Is6() == ipv6 {
			return ip.Unmap(), ep, true
		}
	}
	return netip.Addr{}, ep, false
}
