package cni

import (
	"context"
	"encoding/json"
	"net/netip"
	"strings"

	"github.com/containernetworking/plugins/pkg/ipam"
)

// ipamStdin is the configuration IPAM is run with: stdin, with Calico's
// "subnet": "usePodCidr" replaced by the HNS network's IPv4 subnet, which
// ADD allocates from and CHECK and STATUS ask about (podcidr.go).
func (s *session) ipamStdin(ctx context.Context) ([]byte, error) {
	return s.withPodCIDR(ctx, s.networkPodCIDR)
}

// releaseStdin is ipamStdin for a release (DEL, GC), which must work with
// the network already gone (releasePodCIDR).
func (s *session) releaseStdin(ctx context.Context) ([]byte, error) {
	return s.withPodCIDR(ctx, s.releasePodCIDR)
}

// withPodCIDR is stdin with a "usePodCidr" ipam subnet replaced by what
// podCIDR resolves it to; stdin itself when there is none.
func (s *session) withPodCIDR(ctx context.Context, podCIDR func(context.Context) (netip.Prefix, error)) ([]byte, error) {
	conf, ipamConf, uses, err := podCIDRConfig(s.args.StdinData)
	if err != nil || !uses {
		return s.args.StdinData, err
	}
	p, err := podCIDR(ctx)
	if err != nil {
		return nil, err
	}
	ipamConf["subnet"] = p.String()
	out, err := json.Marshal(conf)
	if err != nil {
		return nil, internal("re-encode configuration: %v", err)
	}
	return out, nil
}

// ipamExec runs an IPAM command (ipam.ExecCheck, ipam.ExecStatus) with
// ipamStdin.
func (s *session) ipamExec(ctx context.Context, exec func(string, []byte) error) error {
	data, err := s.ipamStdin(ctx)
	if err != nil {
		return err
	}
	return exec(s.conf.IPAM.Type, data)
}

// ipamDel releases the attachment's address: IPAM DEL with releaseStdin.
func (s *session) ipamDel(ctx context.Context) error {
	data, err := s.releaseStdin(ctx)
	if err != nil {
		return err
	}
	return ipam.ExecDel(s.conf.IPAM.Type, data)
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
