package cni

import (
	"context"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// The gets the plugin makes, each asked again while it answers "not found"
// (hnslb.GetLooking): hcn makes a get as a listing filtered on the ID or
// the name, and nothing rules out one leaving out an object HNS holds
// (docs/simulator.md, Faults.GetsLeaveOut). Taken at one get's word, a DEL
// reported an endpoint gone that HNS still held and IPAM released its
// address; an ADD failed on a namespace HNS held, or went to make the
// network again beside the one there. An object really gone costs two
// more gets, each an enumeration that finds nothing: a DEL's lookups of
// the pod's endpoint by its names once it is deleted. ADD's lookup of what
// an interrupted ADD left, where nothing is the norm, makes one get
// (removeAttachment).

func (c hnsClient) GetNetworkByName(ctx context.Context, name string) (*hnslb.Network, error) {
	return hnslb.GetLooking(func() (*hnslb.Network, error) { return c.Client.GetNetworkByName(ctx, name) })
}

func (c hnsClient) GetEndpointByName(ctx context.Context, name string) (*hnslb.Endpoint, error) {
	return hnslb.GetLooking(func() (*hnslb.Endpoint, error) { return c.Client.GetEndpointByName(ctx, name) })
}

func (c hnsClient) GetEndpointByID(ctx context.Context, id string) (*hnslb.Endpoint, error) {
	return hnslb.GetLooking(func() (*hnslb.Endpoint, error) { return c.Client.GetEndpointByID(ctx, id) })
}

func (c hnsClient) GetNamespaceByID(ctx context.Context, id string) (*hnslb.Namespace, error) {
	return hnslb.GetLooking(func() (*hnslb.Namespace, error) { return c.Client.GetNamespaceByID(ctx, id) })
}
