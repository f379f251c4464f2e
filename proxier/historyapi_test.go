package proxier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// What a random history changes through the API: Services, EndpointSlices
// and Nodes (proxier/history_test.go).
// applyService creates or replaces one of the Services with a random spec.
func (h *proxierHistory) applyService() {
	i := h.rng.IntN(len(phServices))
	s := h.randomService(i)
	h.note("service %s: %s", s.Name, describeService(s))
	h.apply(s)
}

func (h *proxierHistory) randomService(i int) *v1.Service {
	rng := h.rng
	clusterIP, clusterIP6 := fmt.Sprintf("10.96.0.%d", 10+i), fmt.Sprintf("fd00:10:96::%d", 10+i)
	s := service(phServices[i], clusterIP)
	// Distinct ages: the older Service keeps a frontend two want.
	s.CreationTimestamp = metav1.NewTime(s.CreationTimestamp.Add(time.Duration(i) * time.Minute))
	s.Spec.Ports = []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}
	if rng.IntN(2) == 0 {
		s.Spec.Ports = append(s.Spec.Ports, v1.ServicePort{Name: "dns", Protocol: v1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(5353)})
	}
	if h.spec.dual {
		switch rng.IntN(3) {
		case 1:
			s.Spec.ClusterIPs = []string{clusterIP, clusterIP6}
			s.Spec.IPFamilies = []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol}
			s.Spec.IPFamilyPolicy = ptr.To(v1.IPFamilyPolicyPreferDualStack)
		case 2:
			s.Spec.ClusterIP, s.Spec.ClusterIPs = clusterIP6, []string{clusterIP6}
			s.Spec.IPFamilies = []v1.IPFamily{v1.IPv6Protocol}
		}
	}
	switch rng.IntN(8) {
	case 0, 1:
	case 2, 3:
		s.Spec.Type = v1.ServiceTypeNodePort
	case 4, 5:
		s.Spec.Type = v1.ServiceTypeLoadBalancer
		for _, ip := range pickSome(rng, []string{"192.0.2.30", "192.0.2.31", "2001:db8::30"}) {
			if h.spec.dual || !strings.Contains(ip, ":") {
				s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, v1.LoadBalancerIngress{IP: ip})
			}
		}
	case 6:
		s.Spec.ClusterIP, s.Spec.ClusterIPs = v1.ClusterIPNone, []string{v1.ClusterIPNone}
	case 7:
		s.Spec.Type, s.Spec.ExternalName = v1.ServiceTypeExternalName, "example.com"
		s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies = "", nil, nil
	}
	if s.Spec.Type == v1.ServiceTypeNodePort || s.Spec.Type == v1.ServiceTypeLoadBalancer {
		for p := range s.Spec.Ports {
			s.Spec.Ports[p].NodePort = int32(30000 + 10*i + p)
		}
		if rng.IntN(3) == 0 {
			s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
			s.Spec.HealthCheckNodePort = int32(32000 + i)
		}
	}
	if s.Spec.Type != v1.ServiceTypeExternalName {
		if rng.IntN(3) == 0 {
			for _, ip := range pickSome(rng, []string{"192.0.2.20", "192.0.2.21", "2001:db8::20"}) {
				if h.spec.dual || !strings.Contains(ip, ":") {
					s.Spec.ExternalIPs = append(s.Spec.ExternalIPs, ip)
				}
			}
		}
		if rng.IntN(4) == 0 {
			s.Spec.InternalTrafficPolicy = ptr.To(v1.ServiceInternalTrafficPolicyLocal)
		}
		if rng.IntN(4) == 0 {
			s.Spec.SessionAffinity = v1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](10800)}}
		}
	}
	if rng.IntN(8) == 0 {
		malform(rng, s)
	}
	return s
}

// malform spoils one field the API server would have checked, as a
// mirror, an old API server or a webhook may let through.
func malform(rng *rand.Rand, s *v1.Service) {
	switch rng.IntN(4) {
	case 0:
		s.Spec.ExternalIPs = append(s.Spec.ExternalIPs, "192.0.2.999")
	case 1:
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, v1.LoadBalancerIngress{IP: "not-an-ip"})
	case 2:
		s.Spec.Ports[0].Port = 0
	case 3:
		if s.Spec.ClusterIP != v1.ClusterIPNone && s.Spec.ClusterIP != "" {
			s.Spec.ClusterIPs = append([]string{"10.96.0.300"}, s.Spec.ClusterIPs[1:]...)
			s.Spec.ClusterIP = s.Spec.ClusterIPs[0]
		}
	}
}

func describeService(s *v1.Service) string {
	var ports []string
	for _, p := range s.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%s/%d:%d", p.Protocol, p.Port, p.NodePort))
	}
	itp := ""
	if s.Spec.InternalTrafficPolicy != nil {
		itp = string(*s.Spec.InternalTrafficPolicy)
	}
	return fmt.Sprintf("%s %v ports %v etp %q itp %q affinity %q external %v ingress %v",
		s.Spec.Type, s.Spec.ClusterIPs, ports, s.Spec.ExternalTrafficPolicy, itp, s.Spec.SessionAffinity,
		s.Spec.ExternalIPs, s.Status.LoadBalancer.Ingress)
}

func pickSome[T any](rng *rand.Rand, from []T) []T {
	var out []T
	for _, x := range from {
		if rng.IntN(2) == 0 {
			out = append(out, x)
		}
	}
	return out
}

// sliceName picks one of the slices a history uses: two IPv4 per
// Service, one IPv6 on a dual-stack node.
func (h *proxierHistory) sliceName() string {
	svc := phServices[h.rng.IntN(len(phServices))]
	if h.spec.dual && h.rng.IntN(3) == 0 {
		return svc + "-v6"
	}
	return fmt.Sprintf("%s-%d", svc, h.rng.IntN(2))
}

// applySlice creates or replaces a slice (its Service may not exist) with
// random endpoints in random conditions.
func (h *proxierHistory) applySlice() {
	name := h.sliceName()
	svc := name[:len("svc-a")]
	at, pool := discoveryv1.AddressTypeIPv4, phEndpoints
	if strings.HasSuffix(name, "-v6") {
		at, pool = discoveryv1.AddressTypeIPv6, phEndpoints6
	}
	s := sliceOf(svc, name, at)
	s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To("dns"), Port: ptr.To[int32](5353), Protocol: ptr.To(v1.ProtocolUDP)})
	var desc []string
	if h.rng.IntN(6) == 0 { // a named target port that resolves to another number in this slice's pods
		s.Ports[0].Port = ptr.To[int32](8081)
		desc = append(desc, "http on 8081")
	}
	seen := map[string]bool{}
	for _, e := range pickSome(h.rng, pool) {
		if seen[e.ip] { // one address once per slice, as the controller writes it
			continue
		}
		seen[e.ip] = true
		ready, serving, terminating := true, true, false
		switch h.rng.IntN(5) {
		case 0:
			ready, serving, terminating = false, true, true
		case 1:
			ready, serving, terminating = false, false, true
		case 2:
			ready, serving = false, false
		}
		ep := discoveryv1.Endpoint{Addresses: []string{e.ip},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating}}
		if e.node != "" {
			ep.NodeName = ptr.To(e.node)
		}
		s.Endpoints = append(s.Endpoints, ep)
		desc = append(desc, fmt.Sprintf("%s@%s r%t s%t t%t", e.ip, e.node, ready, serving, terminating))
	}
	if h.rng.IntN(3) == 0 { // topology hints, on every endpoint as the controller gives them
		for i := range s.Endpoints {
			hints := &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: []string{"zone-a", "zone-b"}[h.rng.IntN(2)]}}}
			if h.rng.IntN(2) == 0 {
				hints.ForNodes = []discoveryv1.ForNode{{Name: nodeName}}
			}
			s.Endpoints[i].Hints = hints
		}
		desc = append(desc, "hinted")
	}
	h.note("slice %s: %v", name, desc)
	h.apply(s)
}

// changeNode changes this node's addresses, pod CIDRs or zone, or has
// win-4 join or leave (its route added or removed with it on overlay, as
// Flannel does).
func (h *proxierHistory) changeNode() {
	ctx := context.Background()
	nodes := h.n.client.CoreV1().Nodes()
	own, err := nodes.Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	switch h.rng.IntN(4) {
	case 0:
		extra := v1.NodeAddress{Type: v1.NodeInternalIP, Address: "10.0.0.11"}
		if h.spec.dual {
			extra.Address = phNodeIP6
		}
		if i := slices.Index(own.Status.Addresses, extra); i >= 0 {
			own.Status.Addresses = slices.Delete(own.Status.Addresses, i, i+1)
		} else {
			own.Status.Addresses = append(own.Status.Addresses, extra)
		}
		h.note("node addresses %v", own.Status.Addresses)
	case 1:
		// A pod CIDR the node gets late, or never (Calico IPAM).
		if len(own.Spec.PodCIDRs) > 0 {
			own.Spec.PodCIDR, own.Spec.PodCIDRs = "", nil
		} else {
			own.Spec.PodCIDR, own.Spec.PodCIDRs = podCIDR, []string{podCIDR}
			if h.spec.dual {
				own.Spec.PodCIDRs = append(own.Spec.PodCIDRs, phPodCIDR6)
			}
		}
		h.note("node pod CIDRs %v", own.Spec.PodCIDRs)
	case 2:
		own.Labels[v1.LabelTopologyZone] = []string{"zone-a", "zone-b"}[h.rng.IntN(2)]
		h.note("node zone %s", own.Labels[v1.LabelTopologyZone])
	case 3:
		h.joinOrLeave()
		return
	}
	if _, err := nodes.Update(ctx, own, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// joinOrLeave has win-4's Node made or deleted, and on overlay its route
// added or removed with it, as Flannel does.
func (h *proxierHistory) joinOrLeave() {
	ctx := context.Background()
	nodes := h.n.client.CoreV1().Nodes()
	_, err := nodes.Get(ctx, phJoin[0], metav1.GetOptions{})
	joined := err == nil
	h.note("%s joins: %t", phJoin[0], !joined)
	if joined {
		err = nodes.Delete(ctx, phJoin[0], metav1.DeleteOptions{})
	} else {
		_, err = nodes.Create(ctx, otherNode(phJoin), metav1.CreateOptions{})
	}
	if err != nil {
		h.t.Fatal(err)
	}
	if h.spec.overlay {
		h.quietly(func() { h.setJoinRoute(!joined) })
	}
}

// setJoinRoute adds or removes win-4's route on this node's network.
func (h *proxierHistory) setJoinRoute(present bool) {
	nw, err := h.n.hns.GetNetworkByID(context.Background(), h.n.networkID)
	if err != nil {
		h.t.Fatal(err)
	}
	route := phRoute(phJoin)
	pols := slices.DeleteFunc(slices.Clone(nw.Policies), func(p hnslb.NetworkPolicy) bool {
		return fmt.Sprint(p) == fmt.Sprint(route)
	})
	if present {
		pols = append(pols, route)
	}
	if err := h.n.hns.SetNetworkPolicies(h.n.networkID, pols); err != nil {
		h.t.Fatal(err)
	}
}
