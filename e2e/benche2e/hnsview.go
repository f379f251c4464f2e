//go:build linux && benche2e

package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// hnsView reads what the node's HNS holds: which load balancer serves a
// ClusterIP and which pod addresses it balances to. A load balancer is
// read by ID (a few hcn RPCs) rather than by listing everything, so a
// poll costs the same at 10 and 10,000 Services; the IDs come from one
// dump and are looked up again by frontend (hnssim's dump of the load
// balancers on one VIP) when HNS no longer knows one, as after each
// replacement where HNS cannot modify.
type hnsView struct {
	hns     *remote.Client
	lbByVIP map[string]string
	epIP    map[string]string
}

func newHNSView(hns *remote.Client) *hnsView {
	return &hnsView{hns: hns, lbByVIP: map[string]string{}, epIP: map[string]string{}}
}

// refresh rereads every load balancer and endpoint from one dump, and
// returns, per frontend VIP, how many backends its load balancer has.
func (v *hnsView) refresh(ctx context.Context) (map[string]int, error) {
	snap, err := v.hns.Dump(ctx)
	if err != nil {
		return nil, err
	}
	clear(v.lbByVIP)
	for _, e := range snap.Endpoints {
		if len(e.IpConfigurations) > 0 {
			v.epIP[e.ID] = e.IpConfigurations[0].IpAddress
		}
	}
	backends := map[string]int{}
	for _, lb := range snap.LoadBalancers {
		for _, vip := range lb.FrontendVIPs {
			v.lbByVIP[vip] = lb.ID
			backends[vip] = len(lb.HostComputeEndpoints)
		}
	}
	return backends, nil
}

// synced counts the VIPs of want whose load balancer has exactly the
// wanted number of backends.
func (v *hnsView) synced(ctx context.Context, want map[string]int) (int, error) {
	got, err := v.refresh(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for vip, count := range want {
		if c, ok := got[vip]; ok && c == count {
			n++
		}
	}
	return n, nil
}

// loadBalancerID is the ID of the load balancer serving vip.
func (v *hnsView) loadBalancerID(ctx context.Context, vip string) (string, error) {
	on, err := v.hns.LoadBalancersOn(ctx, vip)
	if err != nil {
		return "", err
	}
	if len(on) == 0 {
		return "", fmt.Errorf("HNS has no load balancer for %s", vip)
	}
	return on[0].ID, nil
}

// backends are the pod addresses the load balancer of vip balances to,
// sorted; exists is false when HNS has no load balancer for it, as for a
// moment while one is replaced where HNS cannot modify (deleted, then
// created with a new ID).
func (v *hnsView) backends(ctx context.Context, vip string) (ips []string, exists bool, err error) {
	id, ok := v.lbByVIP[vip]
	var lb *hnslb.LoadBalancer
	if ok {
		lb, err = v.hns.GetLoadBalancerByID(ctx, id)
	}
	if !ok || hnslb.IsNotFound(err) {
		on, err := v.hns.LoadBalancersOn(ctx, vip)
		if err != nil || len(on) == 0 {
			delete(v.lbByVIP, vip)
			return nil, false, err
		}
		lb = &on[0]
		v.lbByVIP[vip] = lb.ID
	} else if err != nil {
		return nil, false, err
	}
	ips = make([]string, 0, len(lb.HostComputeEndpoints))
	for _, ep := range lb.HostComputeEndpoints {
		ip, ok := v.epIP[ep]
		if !ok {
			e, err := v.hns.GetEndpointByID(ctx, ep)
			if err != nil {
				return nil, false, fmt.Errorf("endpoint %s of the load balancer for %s: %w", ep, vip, err)
			}
			if len(e.IpConfigurations) > 0 {
				ip = e.IpConfigurations[0].IpAddress
			}
			v.epIP[ep] = ip
		}
		ips = append(ips, ip)
	}
	slices.Sort(ips)
	return ips, true, nil
}

// pollInterval is the resolution of a programming-latency sample; a
// read by ID costs 4 hcn RPCs (0.8 ms at 0.2 ms/RPC) per VIP.
const pollInterval = 2 * time.Millisecond

// waitFor polls until every VIP has a load balancer whose backends
// satisfy ok and returns the moment it saw so; the error says what it saw
// last.
func (v *hnsView) waitFor(ctx context.Context, vips []string, timeout time.Duration, ok func([]string) bool) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		done := true
		var last []string
		for _, vip := range vips {
			ips, exists, err := v.backends(ctx, vip)
			if hnslb.IsUnavailable(err) { // HNS restarting: look again
				done = false
				break
			}
			if err != nil {
				return time.Time{}, err
			}
			if !exists || !ok(ips) {
				done, last = false, ips
				break
			}
		}
		if done {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("HNS still balances to %v after %v", last, timeout)
		}
		time.Sleep(pollInterval)
	}
}
