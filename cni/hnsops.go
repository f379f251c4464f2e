package cni

import (
	"context"
	"fmt"
	"strings"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// hnsClient adds the plugin's compound HNS operations to hnslb.Client.
type hnsClient struct{ hnslb.Client }

// network returns the named HNS network, or nil if there is none.
func (c hnsClient) network(ctx context.Context, name string) (*hnslb.Network, error) {
	n, err := c.GetNetworkByName(ctx, name)
	if hnslb.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, hnsError("get HNS network "+name, err)
	}
	return n, nil
}

// checkNetworkType refuses a network whose type is not the configured
// mode's. l2bridge takes an L2Tunnel network too, as win-bridge does (its
// ADD accepts either type; sdnbridge checks none).
func checkNetworkType(n *hnslb.Network, mode string) error {
	if modeOfType(n.Type) != mode {
		return invalidConfig("HNS network %q is of type %s, but mode is %q", n.Name, n.Type, mode)
	}
	return nil
}

// modeOfType is the mode that wires pods into an HNS network type, or "".
func modeOfType(t hnslb.NetworkType) string {
	switch {
	case strings.EqualFold(string(t), string(hnslb.NetworkTypeL2Bridge)), strings.EqualFold(string(t), string(hnslb.NetworkTypeL2Tunnel)):
		return ModeL2Bridge
	case strings.EqualFold(string(t), string(hnslb.NetworkTypeOverlay)):
		return ModeOverlay
	}
	return ""
}

// removeEndpoint detaches and deletes the named endpoint and reports whether
// there was one. Anything already gone counts as done: DEL is idempotent and
// the namespace may be gone.
func (c hnsClient) removeEndpoint(ctx context.Context, name string) (bool, error) {
	ep, err := c.GetEndpointByName(ctx, name)
	if hnslb.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, hnsError("get HNS endpoint "+name, err)
	}
	return true, c.deleteEndpoint(ctx, ep)
}

func (c hnsClient) deleteEndpoint(ctx context.Context, ep *hnslb.Endpoint) error {
	if ep.HostComputeNamespace != "" {
		err := c.RemoveNamespaceEndpoint(ctx, ep.HostComputeNamespace, ep.ID)
		if err != nil && !hnslb.IsNotFound(err) {
			return hnsError("detach HNS endpoint "+ep.Name, err)
		}
	}
	if err := c.DeleteEndpoint(ctx, ep.ID); err != nil && !hnslb.IsNotFound(err) {
		return hnsError("delete HNS endpoint "+ep.Name, err)
	}
	return nil
}

// deletesOfAKeptEndpoint bounds the deletes one command makes of an
// endpoint HNS lists again after each: HNS has kept endpoints whose
// deletes it reported done (microsoft/Windows-Containers#631), and may
// answer a delete "not found" and keep one. One a second or third delete
// removes does not fail the command, so a pod is not held Terminating for
// the kubelet's next try; each costs a delete and a read. One still
// listed after them is kept as far as one command can tell.
const deletesOfAKeptEndpoint = 3

// deleteUntilGone deletes ep and reads it again by ID, deleting it again
// while HNS still lists it (deleteWhileFound). One HNS cannot say of is
// an error ("try again later"), and its address stays held.
func (c hnsClient) deleteUntilGone(ctx context.Context, ep *hnslb.Endpoint) error {
	id, name := ep.ID, ep.Name
	return c.deleteWhileFound(ctx, ep, func(ctx context.Context) (*hnslb.Endpoint, error) {
		again, err := c.GetEndpointByID(ctx, id)
		switch {
		case hnslb.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, hnsError("read HNS endpoint "+name+" after its delete", err)
		}
		return again, nil
	})
}

// deleteWhileFound deletes ep, then asks find again and deletes what it
// answers, until it answers none. One endpoint found again after
// deletesOfAKeptEndpoint deletes is kept as far as one command can tell:
// keptError. find may answer another endpoint than the one deleted (a
// second under the same name); each has its own count.
func (c hnsClient) deleteWhileFound(ctx context.Context, ep *hnslb.Endpoint, find func(context.Context) (*hnslb.Endpoint, error)) error {
	deletes := map[string]int{} // by lower-case endpoint ID
	for ep != nil {
		id := strings.ToLower(ep.ID)
		if deletes[id] == deletesOfAKeptEndpoint {
			return keptError(ep)
		}
		if err := c.deleteEndpoint(ctx, ep); err != nil {
			return err
		}
		deletes[id]++
		var err error
		if ep, err = find(ctx); err != nil {
			return err
		}
	}
	return nil
}

// keptError is "try again later" for an endpoint HNS still lists after
// deletesOfAKeptEndpoint deletes. It names the way out, since one HNS
// keeps for good fails every DEL of its pod, which then stays
// Terminating: the kubelet logs this text in its FailedKillPod event.
func keptError(ep *hnslb.Endpoint) *types.Error {
	return types.NewError(types.ErrTryAgainLater,
		fmt.Sprintf("HNS still lists endpoint %s after %d deletes", ep.Name, deletesOfAKeptEndpoint),
		fmt.Sprintf("endpoint %s keeps the pod's address, held until a later DEL or GC finds the endpoint gone; if HNS keeps it, remove it with 'hnsdiag delete endpoints %s' (or restart HNS) and the runtime's next try completes", ep.ID, ep.ID))
}

// namespaceHasEndpoint reports whether the namespace lists the endpoint.
func namespaceHasEndpoint(ns *hnslb.Namespace, endpointID string) bool {
	for _, r := range ns.Resources {
		if r.Type != hnslb.NamespaceResourceTypeEndpoint {
			continue
		}
		var d hnslb.NamespaceResourceEndpoint
		if hnslb.DecodeSettings(r.Data, &d) == nil && strings.EqualFold(d.ID, endpointID) {
			return true
		}
	}
	return false
}
