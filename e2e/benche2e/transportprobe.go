//go:build linux && benche2e

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// The transport probe prices the client half of hnssim's transport (JSON
// over HTTP over a unix socket), which hnsproxy's process pays on every
// HNS call and which stands in for hcn's client half on Windows. A child
// process of the bench, doing nothing else, makes the calls hnsproxy makes
// for a readiness flip through the same client, and reports its own
// process CPU per call, its goroutines and its garbage's collections
// included: a load balancer update (with what HNS holds, so nothing
// changes) where HNS can modify, a load balancer's create and delete (a
// copy of one on a frontend no Service has: an update where it cannot),
// and a remote endpoint's create and delete (of an address no pod has,
// under a name hnsproxy does not use).

// probeWarmup calls are made before the measured ones: the connection,
// the first allocations.
const probeWarmup = 50

// probeName names the probe's endpoint: not hnsproxy's naming, so a drift
// repair that lists it meanwhile leaves it alone.
const probeName = "benche2e-transport-probe"

// probeCost is the probe's CPU per call: a load balancer update (0 where
// HNS cannot modify), a load balancer's create or delete, an endpoint's.
type probeCost struct{ update, lbWrite, endpointWrite time.Duration }

// runTransportProbe is the child's work: it prints transportProbe's
// figures in nanoseconds.
func runTransportProbe(socket string, calls int, modifies bool) error {
	cost, err := transportProbe(context.Background(), socket, calls, modifies)
	if err != nil {
		return err
	}
	fmt.Println(cost.update.Nanoseconds(), cost.lbWrite.Nanoseconds(), cost.endpointWrite.Nanoseconds())
	return nil
}

// transportProbe makes, through hnssim's client at socket, calls updates
// of one load balancer (if HNS modifies), and calls/2 creates and deletes
// of a copy of it and of one remote endpoint, and returns this process's
// CPU per call of each kind.
func transportProbe(ctx context.Context, socket string, calls int, modifies bool) (probeCost, error) {
	if calls < 2 {
		return probeCost{}, fmt.Errorf("transport probe: %d calls", calls)
	}
	c := remote.NewClient(socket)
	defer c.Close()
	snap, err := c.Dump(ctx)
	if err != nil {
		return probeCost{}, err
	}
	lb, err := busiestLoadBalancer(snap)
	if err != nil {
		return probeCost{}, err
	}
	ep, err := spareRemoteEndpoint(snap)
	if err != nil {
		return probeCost{}, err
	}
	spare, err := spareLoadBalancer(snap, lb)
	if err != nil {
		return probeCost{}, err
	}
	update := func(n int) error {
		for range n {
			if _, err := c.UpdateLoadBalancer(ctx, lb.ID, lb); err != nil {
				return err
			}
		}
		return nil
	}
	replace := func(n int) error {
		for range n {
			made, err := c.CreateLoadBalancer(ctx, spare)
			if err != nil {
				return err
			}
			if err := c.DeleteLoadBalancer(ctx, made.ID); err != nil {
				return err
			}
		}
		return nil
	}
	createDelete := func(n int) error {
		for range n {
			made, err := c.CreateEndpoint(ctx, ep.HostComputeNetwork, ep)
			if err != nil {
				return err
			}
			if err := c.DeleteEndpoint(ctx, made.ID); err != nil {
				return err
			}
		}
		return nil
	}
	var cost probeCost
	if modifies {
		if cost.update, err = perCall(update, calls); err != nil {
			return cost, err
		}
	}
	// Each round is two calls.
	if cost.lbWrite, err = perCall(replace, calls/2); err != nil {
		return cost, err
	}
	cost.lbWrite /= 2
	cost.endpointWrite, err = perCall(createDelete, calls/2)
	cost.endpointWrite /= 2
	return cost, err
}

// spareLoadBalancer is a copy of lb on a frontend address that no load
// balancer HNS holds has (from .254 of its /24 down).
func spareLoadBalancer(snap *hnslb.Snapshot, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	used := map[string]bool{}
	for _, l := range snap.LoadBalancers {
		for _, vip := range l.FrontendVIPs {
			used[vip] = true
		}
	}
	if len(lb.FrontendVIPs) == 0 {
		return nil, fmt.Errorf("load balancer %s has no frontend to copy", lb.ID)
	}
	a, err := netip.ParseAddr(lb.FrontendVIPs[0])
	if err != nil || !a.Is4() {
		return nil, fmt.Errorf("load balancer %s: frontend %q is not IPv4", lb.ID, lb.FrontendVIPs[0])
	}
	b := a.As4()
	for host := 254; host > 0; host-- {
		b[3] = byte(host)
		if vip := netip.AddrFrom4(b).String(); !used[vip] {
			spare := *lb
			spare.ID, spare.FrontendVIPs = "", []string{vip}
			return &spare, nil
		}
	}
	return nil, fmt.Errorf("no free frontend beside %s", a)
}

// perCall runs fn(probeWarmup), then fn(n) timed, and returns this
// process's CPU per round of it.
func perCall(fn func(int) error, n int) (time.Duration, error) {
	if err := fn(probeWarmup); err != nil {
		return 0, err
	}
	start, err := selfCPU()
	if err != nil {
		return 0, err
	}
	if err := fn(n); err != nil {
		return 0, err
	}
	end, err := selfCPU()
	return (end - start) / time.Duration(n), err
}

// busiestLoadBalancer is the load balancer with the most backends: the
// largest update body a flip sends.
func busiestLoadBalancer(snap *hnslb.Snapshot) (*hnslb.LoadBalancer, error) {
	var best *hnslb.LoadBalancer
	for i := range snap.LoadBalancers {
		if lb := &snap.LoadBalancers[i]; best == nil || len(lb.HostComputeEndpoints) > len(best.HostComputeEndpoints) {
			best = lb
		}
	}
	if best == nil {
		return nil, fmt.Errorf("HNS holds no load balancer to probe with")
	}
	return best, nil
}

// spareRemoteEndpoint is a copy of a remote endpoint HNS holds, with an
// address in its /24 that no endpoint has (from .254 down) and the
// probe's name: what hnsproxy creates for a pod, for no pod.
func spareRemoteEndpoint(snap *hnslb.Snapshot) (*hnslb.Endpoint, error) {
	used := map[netip.Addr]bool{}
	var template *hnslb.Endpoint
	for i := range snap.Endpoints {
		e := &snap.Endpoints[i]
		a, err := netip.ParseAddr(e.IP())
		if err != nil {
			continue
		}
		used[a] = true
		if template == nil && e.IsRemote() && a.Is4() {
			template = e
		}
	}
	if template == nil {
		return nil, fmt.Errorf("HNS holds no IPv4 remote endpoint to copy")
	}
	b := netip.MustParseAddr(template.IP()).As4()
	for host := 254; host > 0; host-- {
		b[3] = byte(host)
		if a := netip.AddrFrom4(b); !used[a] {
			ep := &hnslb.Endpoint{
				Name: probeName, HostComputeNetwork: template.HostComputeNetwork,
				IpConfigurations: []hnslb.IPConfig{{IpAddress: a.String()}},
				Flags:            template.Flags, Policies: template.Policies, SchemaVersion: template.SchemaVersion,
			}
			return ep, nil
		}
	}
	return nil, fmt.Errorf("no free address beside %s", template.IP())
}

// selfCPU is this process's CPU so far, user and system.
func selfCPU() (time.Duration, error) { return framework.ProcessCPU(os.Getpid()) }

// probeTransport runs the probe in a child process (this binary, with
// -transport-probe-socket) and returns its CPU per call.
func probeTransport(ctx context.Context, socket string, calls int, modifies bool) (probeCost, error) {
	self, err := os.Executable()
	if err != nil {
		return probeCost{}, err
	}
	cmd := exec.CommandContext(ctx, self, "-transport-probe-socket", socket, "-transport-probe-calls", strconv.Itoa(calls),
		"-transport-probe-modify="+strconv.FormatBool(modifies))
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return probeCost{}, fmt.Errorf("transport probe: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var update, lbWrite, endpoint int64
	if _, err := fmt.Sscan(out.String(), &update, &lbWrite, &endpoint); err != nil {
		return probeCost{}, fmt.Errorf("transport probe printed %q: %w", out.String(), err)
	}
	return probeCost{update: time.Duration(update), lbWrite: time.Duration(lbWrite), endpointWrite: time.Duration(endpoint)}, nil
}
