//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
)

// replaceNetwork deletes the node's HNS network and makes it again under
// its name, as a CNI does on a changed configuration
// (docs/reliability.md, "The HNS network gone or replaced"). Every endpoint
// on it goes with it: the pods', the other agent's and hnsproxy's. Then the
// node's agents do what they would: the CNI wires each pod again on the new
// network (its address, MAC and namespace kept, so the API objects stay
// true) and the other agent makes its objects again. hnsproxy must notice,
// exit saying so, and program the new network once keepProxies starts it
// again: that exit is expected, not a crash. HNS's injected faults go on
// meanwhile, so each step is retried until it holds.
func (c *chaos) replaceNetwork(ctx context.Context, n *framework.Node) {
	if !c.replaceNetworkOf(ctx, n) {
		return
	}
	c.replantForeign(ctx, n)
	c.networkReplacements.Add(1)
}

// replaceNetworkOf is replaceNetwork up to the other agent's objects, with
// the node's foreign set turned over to the new pods' endpoints; it reports
// whether it got that far.
func (c *chaos) replaceNetworkOf(ctx context.Context, n *framework.Node) bool {
	hns := n.Sim.Client
	var old *hnslb.Network
	err := framework.Poll(ctx, settleFor, 200*time.Millisecond, func(ctx context.Context) error {
		var err error
		old, err = hns.GetNetworkByName(ctx, soakNetwork())
		return err
	})
	if err != nil {
		c.report(fmt.Errorf("node %s: reading the network to replace: %w", n.Name(), err))
		return false
	}
	// Waited for without plantMu: behind a kill the wait can last a
	// minute, and each node's replant after an HNS restart waits on it.
	if err := c.expectNetworkExit(ctx, n, old.ID); err != nil {
		c.report(fmt.Errorf("node %s: before replacing the network: %w", n.Name(), err))
		return false
	}
	c.plantMu.Lock()
	defer c.plantMu.Unlock()
	var pods []hnslb.Endpoint
	err = framework.Poll(ctx, settleFor, 200*time.Millisecond, func(ctx context.Context) error {
		snap, err := n.Sim.Dump(ctx)
		if err != nil {
			return err
		}
		pods = pods[:0]
		for _, ep := range snap.Endpoints {
			if isPodEndpoint(&ep) && strings.EqualFold(ep.HostComputeNetwork, old.ID) {
				pods = append(pods, ep)
			}
		}
		return nil
	})
	if err != nil {
		c.report(fmt.Errorf("node %s: reading the pods on the network to replace: %w", n.Name(), err))
		return false
	}
	doc := *old
	doc.ID = ""
	var now *hnslb.Network
	err = framework.Poll(ctx, settleFor, 200*time.Millisecond, func(ctx context.Context) error {
		if err := hns.DeleteNetwork(ctx, old.ID); err != nil && !hnslb.IsNotFound(err) {
			return err
		}
		got, err := hns.GetNetworkByName(ctx, soakNetwork())
		if hnslb.IsNotFound(err) {
			got, err = hns.CreateNetwork(ctx, &doc)
		}
		if err != nil {
			return err
		}
		if strings.EqualFold(got.ID, old.ID) {
			return fmt.Errorf("network %s not deleted yet", old.ID)
		}
		now = got
		return nil
	})
	if err != nil {
		c.report(fmt.Errorf("node %s: replacing the network: %w", n.Name(), err))
		return false
	}
	podIDs, err := rewirePods(ctx, n, now.ID, pods)
	if err != nil {
		c.report(fmt.Errorf("node %s: wiring the pods again: %w", n.Name(), err))
		return false
	}
	// The other agent's load balancers lost their backends with the old
	// network; it deletes them and makes everything again.
	for id := range c.foreignOf(n.Name()).LBs {
		err := framework.Poll(ctx, settleFor, 200*time.Millisecond, func(ctx context.Context) error {
			if err := hns.DeleteLoadBalancer(ctx, id); err != nil && !hnslb.IsNotFound(err) {
				return err
			}
			// HNS may report the delete done and keep it (KeptOnDelete).
			if _, err := hns.GetLoadBalancerByID(ctx, id); !hnslb.IsNotFound(err) {
				return fmt.Errorf("still listed after its delete (%v)", err)
			}
			return nil
		})
		if err != nil {
			c.report(fmt.Errorf("node %s: the other agent's load balancer %s: %w", n.Name(), id, err))
		}
	}
	c.foreignMu.Lock()
	c.foreign[n.Name()] = foreignSet{LBs: map[string]bool{}, Endpoints: podIDs}
	c.foreignMu.Unlock()
	return true
}

// rewirePods makes each pod's endpoint again on network, with its name,
// addresses and MAC, attached to its namespace, as the CNI does; it returns
// the new endpoints' IDs.
func rewirePods(ctx context.Context, n *framework.Node, network string, pods []hnslb.Endpoint) (map[string]bool, error) {
	hns := n.Sim.Client
	ids := map[string]bool{}
	for _, p := range pods {
		doc := p
		doc.ID, doc.HostComputeNetwork, doc.HostComputeNamespace = "", network, ""
		err := framework.Poll(ctx, settleFor, 200*time.Millisecond, func(ctx context.Context) error {
			ep, err := hns.GetEndpointByName(ctx, p.Name)
			if hnslb.IsNotFound(err) {
				ep, err = hns.CreateEndpoint(ctx, network, &doc)
			}
			if err != nil {
				return err
			}
			if !strings.EqualFold(ep.HostComputeNamespace, p.HostComputeNamespace) {
				if err := hns.AddNamespaceEndpoint(ctx, p.HostComputeNamespace, ep.ID); err != nil {
					return err
				}
			}
			ids[storedID(ep.ID)] = true
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("pod endpoint %s: %w", p.Name, err)
		}
	}
	return ids, nil
}

// expectNetworkExit notes that the node's hnsproxy is to exit for a
// replaced network, once no kill of it is under way and the running
// process has found the network by its ID now (one still starting might
// read the new network and have nothing to exit for); kills wait until the
// exit is seen (beginKill).
func (c *chaos) expectNetworkExit(ctx context.Context, n *framework.Node, networkID string) error {
	if err := c.awaitRunningOn(ctx, n.Name(), settleFor, func() bool { return foundNetwork(n, networkID) }); err != nil {
		return fmt.Errorf("network %s: %w", networkID, err)
	}
	return nil
}

// awaitRunningOn waits until no kill of the node's hnsproxy is under way and
// found reports that the running one read the network, then marks the exit
// expected. A kill waits for the proxy's writes to begin, until the fault
// window's end if they do not (killMidSync: a full state directory and a
// hung HNS can stop them for that long), so only the time after a kill
// counts against settle: the restarted proxy gets settle to read the network.
func (c *chaos) awaitRunningOn(ctx context.Context, node string, settle time.Duration, found func() bool) error {
	deadline := time.Now().Add(settle)
	for ; ctx.Err() == nil; time.Sleep(watchEvery) {
		c.networkExitMu.Lock()
		killing := c.killing[node]
		if !killing && found() {
			c.networkExit[node] = true
			c.networkExitMu.Unlock()
			return nil
		}
		c.networkExitMu.Unlock()
		if killing {
			deadline = time.Now().Add(settle)
		} else if !time.Now().Before(deadline) {
			break
		}
	}
	return fmt.Errorf("hnsproxy did not run on the network within %v after the last kill", settle)
}

func foundNetwork(n *framework.Node, id string) bool {
	log, err := os.ReadFile(n.Proxy.LogPath())
	if err != nil {
		return false
	}
	s := string(log)
	if i := strings.LastIndex(s, `"Starting hnsproxy"`); i >= 0 {
		s = s[i:]
	}
	return strings.Contains(s, `"Found the HNS network" name="`+soakNetwork()+`" id="`+id+`"`)
}

// beginKill reports whether the node's hnsproxy may be killed now (no exit
// for a replaced network is awaited) and, if so, marks a kill under way.
func (c *chaos) beginKill(n *framework.Node) bool {
	c.networkExitMu.Lock()
	defer c.networkExitMu.Unlock()
	if c.networkExit[n.Name()] {
		return false
	}
	c.killing[n.Name()] = true
	return true
}

// endKill marks the node's kill done.
func (c *chaos) endKill(n *framework.Node) {
	c.networkExitMu.Lock()
	defer c.networkExitMu.Unlock()
	c.killing[n.Name()] = false
}

// exitedForNetwork reports whether the node's hnsproxy, found exited, was
// to exit for a replaced network and says so in its log; the expectation
// is spent either way.
func (c *chaos) exitedForNetwork(n *framework.Node) bool {
	c.networkExitMu.Lock()
	expected := c.networkExit[n.Name()]
	c.networkExit[n.Name()] = false
	c.networkExitMu.Unlock()
	if !expected {
		return false
	}
	log, err := os.ReadFile(n.Proxy.LogPath())
	if err != nil {
		return false
	}
	tail := string(log[max(0, len(log)-8192):])
	return strings.Contains(tail, "was replaced: its ID was") || strings.Contains(tail, "is gone, and its endpoints with it")
}
