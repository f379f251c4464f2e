package sim

import "github.com/hnsproxy/hnsproxy/hnslb"

// Helpers that play other actors on the node. They bypass latency, faults
// and the restart window, and are counted under their own operations.

// DeleteLoadBalancerOutOfBand deletes a load balancer behind the client's
// back, as an operator or another agent would (drift).
func (h *HNS) DeleteLoadBalancerOutOfBand(id string) error {
	const op = OpDeleteLoadBalancerOutOfBand
	return h.outOfBand(op, func() error {
		lb, err := find(op, kindLoadBalancer, &h.state.loadBalancers, id, h.notFound(kindLoadBalancer))
		if err != nil {
			return err
		}
		h.state.deleteLoadBalancer(lb.ID)
		return nil
	})
}

// PutLoadBalancerOutOfBand stores a load balancer as another agent or an
// older HNS left it, without HNS's checks: HNS has been seen listing load
// balancers without port mappings (kubernetes/kubernetes#141488). An empty ID
// gets a generated one; an existing ID is replaced. It returns the stored copy.
func (h *HNS) PutLoadBalancerOutOfBand(lb hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	const op = OpPutLoadBalancerOutOfBand
	var out *hnslb.LoadBalancer
	err := h.outOfBand(op, func() error {
		stored := copyLoadBalancer(&lb)
		if stored.ID == "" {
			stored.ID = h.state.ids.guid()
		}
		if err := checkID(op, "load balancer", stored.ID); err != nil {
			return err
		}
		h.state.putLoadBalancer(stored)
		out = copyLoadBalancer(stored)
		return nil
	})
	return result(out, err)
}

// SetNetworkPolicies replaces a network's policies, as flannel does when
// remote subnets change (RemoteSubnetRoute on overlay).
func (h *HNS) SetNetworkPolicies(id string, pols []hnslb.NetworkPolicy) error {
	const op = OpSetNetworkPolicies
	return h.outOfBand(op, func() error {
		n, err := find(op, "network", &h.state.networks, id, hnslb.CodeNotFound)
		if err != nil {
			return err
		}
		if err := checkNetworkPolicies(op, pols); err != nil {
			return err
		}
		n.Policies = copyNetworkPolicies(pols)
		return nil
	})
}

func (h *HNS) outOfBand(op Op, fn func() error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	err := fn()
	h.counters.add(op, resultName(err))
	return err
}
