package cni

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/containernetworking/cni/pkg/types"
)

// podCIDRPlaceholder is Calico's ipam "subnet" value meaning "this node's
// pod CIDR"; hnscni reads that from the HNS network's subnet.
const podCIDRPlaceholder = "usePodCidr"

// ipamStdin is the configuration IPAM is run with: stdin, with Calico's
// "subnet": "usePodCidr" replaced by the HNS network's IPv4 subnet.
func (s *session) ipamStdin(ctx context.Context) ([]byte, error) {
	var conf map[string]any
	if err := json.Unmarshal(s.args.StdinData, &conf); err != nil {
		return nil, types.NewError(types.ErrDecodingFailure, "malformed network configuration", err.Error())
	}
	ipamConf, _ := conf["ipam"].(map[string]any)
	subnet, _ := ipamConf["subnet"].(string)
	if !strings.EqualFold(subnet, podCIDRPlaceholder) {
		return s.args.StdinData, nil
	}
	network, err := s.network(ctx)
	if err != nil {
		return nil, err
	}
	if network == nil {
		return nil, invalidConfig("ipam subnet %q takes the HNS network's subnet, but network %q does not exist", subnet, s.conf.Network)
	}
	p := firstSubnet(network)
	if !p.IsValid() {
		return nil, invalidConfig("ipam subnet %q: HNS network %q has no IPv4 subnet", subnet, s.conf.Network)
	}
	ipamConf["subnet"] = p.String()
	out, err := json.Marshal(conf)
	if err != nil {
		return nil, internal("re-encode configuration: %v", err)
	}
	return out, nil
}

// ipamExec runs an IPAM command (ipam.ExecDel, ipam.ExecCheck, ipam.ExecStatus)
// with ipamStdin.
func (s *session) ipamExec(ctx context.Context, exec func(string, []byte) error) error {
	data, err := s.ipamStdin(ctx)
	if err != nil {
		return err
	}
	return exec(s.conf.IPAM.Type, data)
}

// podNamespace is the pod's Kubernetes namespace from CNI_ARGS
// ("K8S_POD_NAMESPACE=...;..." as the kubelet and containerd pass it), or "".
func (s *session) podNamespace() string {
	for _, kv := range strings.Split(s.args.Args, ";") {
		if v, ok := strings.CutPrefix(kv, "K8S_POD_NAMESPACE="); ok {
			return v
		}
	}
	return ""
}
