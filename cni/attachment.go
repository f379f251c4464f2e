package cni

import (
	"context"
	"strings"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// attachmentEndpoint is the endpoint of the command's attachment
// (endpointOf).
func (s *session) attachmentEndpoint(ctx context.Context, byName func(context.Context, string) (*hnslb.Endpoint, error)) (*hnslb.Endpoint, error) {
	return s.endpointOf(ctx, types.GCAttachment{ContainerID: s.args.ContainerID, IfName: s.args.IfName}, byName)
}

// endpointOf is an attachment's endpoint: under the reference plugins'
// name, else under the name earlier hnscni releases used (on the
// configured network only, and only with IPAM, which they required), so a
// node can switch plugins with pods running. nil if there is none.
// byName is the lookup: s.hns's, which asks again while HNS answers "not
// found" (hnsgets.go), or a single get where "not found" is the norm
// (removeAttachment).
func (s *session) endpointOf(ctx context.Context, a types.GCAttachment, byName func(context.Context, string) (*hnslb.Endpoint, error)) (*hnslb.Endpoint, error) {
	for i, name := range []string{
		endpointName(a.ContainerID, s.conf.Network, a.IfName),
		legacyEndpointName(a.ContainerID, a.IfName),
	} {
		if i == 1 && (s.conf.hnsIPAM() || s.conf.legacyNameIsAnothers(name, a)) {
			break
		}
		ep, err := byName(ctx, name)
		if hnslb.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, hnsError("get HNS endpoint "+name, err)
		}
		if i == 1 {
			network, err := s.network(ctx)
			if err != nil {
				return nil, err
			}
			if network == nil || !strings.EqualFold(network.ID, ep.HostComputeNetwork) {
				continue
			}
		}
		return ep, nil
	}
	return nil, nil
}

// removeAttachment detaches and deletes the attachment's endpoints and
// reports whether there was one. HNS does not keep endpoint names unique
// (hcn's GetEndpointByName answers the first a name query lists): a killed
// ADD's create that HNS applied only after the runtime's DEL and the next
// ADD of the attachment leaves a second endpoint under the name, on an
// address IPAM has released. So each found is removed and the name looked
// up again, until none is left. One HNS lists again after its delete
// (reported done, or answered "not found") is deleted again, up to
// deletesOfAKeptEndpoint times; one still listed then fails the command
// with "try again later", so the address stays held while the endpoint
// may hold it, and the runtime's next DEL deletes it again.
//
// DEL looks up each name until three gets in a row answer "not found"
// (hnsgets.go): one that left out the endpoint answered done with it in
// HNS and its address released. ADD, which removes what an interrupted ADD
// of the attachment left (expectNone), asks once: nearly always there is
// nothing, and three gets of each name would cost every pod start four
// more RPCs, where a stale endpoint one get left out only fails the ADD
// (HNS refuses its address to the new one, naming the holder) for the
// runtime's DEL and next ADD to clear.
func (s *session) removeAttachment(ctx context.Context, expectNone bool) (bool, error) {
	byName := s.hns.GetEndpointByName
	if expectNone {
		byName = s.hns.Client.GetEndpointByName
	}
	ep, err := s.attachmentEndpoint(ctx, byName)
	if ep == nil || err != nil {
		return false, err
	}
	return true, s.hns.deleteWhileFound(ctx, ep, func(ctx context.Context) (*hnslb.Endpoint, error) {
		return s.attachmentEndpoint(ctx, byName)
	})
}

// legacyNameIsAnothers reports whether a's legacy name is the
// name endpointName gives another attachment of the pod on the network:
// "<containerID>_<ifname>" for an interface named as the network is the
// pod's eth0 endpoint, and for "cbr0_net1" on cbr0 its net1 endpoint.
// Such an endpoint is never taken for a's: the legacy name
// cannot be told from the current one, and the current one is the other
// attachment's.
func (n *NetConf) legacyNameIsAnothers(legacy string, a types.GCAttachment) bool {
	containerID, ifName, ok := attachmentOf(legacy, n.Network)
	return ok && (containerID != a.ContainerID || ifName != a.IfName)
}
