package cni

import (
	"context"
	"encoding/json"
	"net/netip"
	"strings"

	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
)

// podCIDRPlaceholder is Calico's ipam "subnet" value meaning "this node's
// pod CIDR"; hnscni reads that from the HNS network's subnet.
const podCIDRPlaceholder = "usePodCidr"

// placeholderRange stands for the pod CIDR in a release when nothing
// tells it any more. host-local releases by container ID and interface
// whatever its range, but parses the range first; 192.0.2.0/24 is
// TEST-NET-1 (RFC 5737), never a node's pod CIDR.
var placeholderRange = netip.MustParsePrefix("192.0.2.0/24")

// podCIDRConfig decodes stdin and reports whether its ipam subnet is
// "usePodCidr"; ipamConf is the ipam object, to rewrite.
func podCIDRConfig(stdin []byte) (conf, ipamConf map[string]any, uses bool, err error) {
	if err := json.Unmarshal(stdin, &conf); err != nil {
		return nil, nil, false, types.NewError(types.ErrDecodingFailure, "malformed network configuration", err.Error())
	}
	ipamConf, _ = conf["ipam"].(map[string]any)
	subnet, _ := ipamConf["subnet"].(string)
	return conf, ipamConf, strings.EqualFold(subnet, podCIDRPlaceholder), nil
}

// networkPodCIDR is the HNS network's IPv4 subnet; the network must exist.
func (s *session) networkPodCIDR(ctx context.Context) (netip.Prefix, error) {
	network, err := s.network(ctx)
	if err != nil {
		return netip.Prefix{}, err
	}
	if network == nil {
		return netip.Prefix{}, invalidConfig("ipam subnet %q takes the HNS network's subnet, but network %q does not exist", podCIDRPlaceholder, s.conf.Network)
	}
	p := firstSubnet(network)
	if !p.IsValid() {
		return netip.Prefix{}, invalidConfig("ipam subnet %q: HNS network %q has no IPv4 subnet", podCIDRPlaceholder, s.conf.Network)
	}
	return p, nil
}

// releasePodCIDR is the pod CIDR for DEL and GC, which must succeed with
// the network already gone (a reboot drops HNS networks that are not
// persistent; Calico makes its network again only later) and still
// release the address. Any range host-local parses releases it, so the
// closest to ADD's that is still known: the network's subnet, else the
// subnet of prevResult's address (DEL from CNI 0.4.0), else a placeholder.
func (s *session) releasePodCIDR(ctx context.Context) (netip.Prefix, error) {
	network, err := s.network(ctx)
	if err != nil {
		return netip.Prefix{}, err
	}
	if network != nil {
		if p := firstSubnet(network); p.IsValid() {
			return p, nil
		}
	}
	if p := prevResultSubnet(s.conf.PrevResult); p.IsValid() {
		return p, nil
	}
	return placeholderRange, nil
}

// prevResultSubnet is the subnet of prevResult's first IPv4 address (a
// result records the address with its prefix), if host-local can take it
// as a range: not a /31 or /32.
func prevResultSubnet(prev types.Result) netip.Prefix {
	if prev == nil {
		return netip.Prefix{}
	}
	res, err := current.NewResultFromResult(prev)
	if err != nil {
		return netip.Prefix{}
	}
	for _, ipc := range res.IPs {
		if a, subnet := prefixOf(ipc.Address); a.Is4() && subnet.IsValid() && subnet.Bits() <= 30 {
			return subnet
		}
	}
	return netip.Prefix{}
}
