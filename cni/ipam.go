package cni

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
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

// ipamExec runs an IPAM command (invoke.DelegateCheck, DelegateStatus)
// with ipamStdin, under ctx (ipamError).
func (s *session) ipamExec(ctx context.Context, delegate func(context.Context, string, []byte, invoke.Exec) error) error {
	data, err := s.ipamStdin(ctx)
	if err != nil {
		return err
	}
	return s.ipamError(ctx, delegate(ctx, s.conf.IPAM.Type, data, nil))
}

// ipamDel releases the attachment's address: IPAM DEL with releaseStdin.
func (s *session) ipamDel(ctx context.Context) error {
	data, err := s.releaseStdin(ctx)
	if err != nil {
		return err
	}
	return s.ipamError(ctx, invoke.DelegateDel(ctx, s.conf.IPAM.Type, data, nil))
}

// ipamError is an IPAM call's error, named as IPAM's when the command's
// deadline stopped the plugin. The IPAM plugin runs under the command's
// context, as HNS calls do, so one that hangs (an IPAM whose datastore
// the node cannot reach) is killed at the deadline rather than left running
// while the plugin answers that HNS did not: code 11, as for HNS.
// (plugins' ipam.Exec* run the plugin with no deadline.)
func (s *session) ipamError(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	return types.NewError(types.ErrTryAgainLater, fmt.Sprintf("IPAM plugin %q did not answer before the command's deadline", s.conf.IPAM.Type), err.Error())
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
