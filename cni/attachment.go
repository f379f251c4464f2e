package cni

import (
	"context"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// attachmentEndpoint is the attachment's endpoint: under the reference
// plugins' name, else under the name earlier hnscni releases used (on the
// configured network only, and only with IPAM, which they required), so a
// node can switch plugins with pods running. nil if there is none.
func (s *session) attachmentEndpoint(ctx context.Context) (*hnslb.Endpoint, error) {
	for i, name := range []string{
		endpointName(s.args.ContainerID, s.conf.Network, s.args.IfName),
		legacyEndpointName(s.args.ContainerID, s.args.IfName),
	} {
		if i == 1 && (s.conf.hnsIPAM() || s.legacyNameIsAnothers(name)) {
			break
		}
		ep, err := s.hns.GetEndpointByName(ctx, name)
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
func (s *session) removeAttachment(ctx context.Context) (bool, error) {
	deletes := map[string]int{} // by lower-case endpoint ID
	for {
		ep, err := s.attachmentEndpoint(ctx)
		if ep == nil || err != nil {
			return len(deletes) > 0, err
		}
		id := strings.ToLower(ep.ID)
		if deletes[id] == deletesOfAKeptEndpoint {
			return true, keptError(ep)
		}
		if err := s.hns.deleteEndpoint(ctx, ep); err != nil {
			return true, err
		}
		deletes[id]++
	}
}

// legacyNameIsAnothers reports whether the attachment's legacy name is the
// name endpointName gives another attachment of the pod on the network:
// "<containerID>_<ifname>" for an interface named as the network is the
// pod's eth0 endpoint, and for "cbr0_net1" on cbr0 its net1 endpoint.
// Such an endpoint is never taken for this attachment's: the legacy name
// cannot be told from the current one, and the current one is the other
// attachment's.
func (s *session) legacyNameIsAnothers(legacy string) bool {
	containerID, ifName, ok := attachmentOf(legacy, s.conf.Network)
	return ok && (containerID != s.args.ContainerID || ifName != s.args.IfName)
}
