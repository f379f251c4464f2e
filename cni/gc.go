package cni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/internal/hostlocalstore"
	"github.com/hnsproxy/hnsproxy/internal/sourcevipipam"
)

// cmdGC deletes this network's pod endpoints whose attachment the runtime
// no longer lists, releases their addresses, and lets IPAM collect its own
// garbage. Only endpoints hnscni made are candidates (ours), so the proxy's
// remote endpoints and other agents' endpoints stay. An endpoint need not be
// attached: deleting a pod's namespace detaches it.
func cmdGC(ctx context.Context, s *session) error {
	if s.conf.ValidAttachments == nil && s.conf.SpecAttachments == nil {
		// The spec requires the list, and libcni always sends it (empty
		// when nothing runs). Read as empty, a runtime's slip would
		// delete every pod's endpoint on the node.
		return invalidConfig("GC needs cni.dev/valid-attachments, the attachments still in use; without it every pod would count as stale")
	}
	network, err := s.network(ctx)
	if err != nil {
		return err
	}
	var errs []error
	// held are the unlisted attachments whose endpoint GC leaves in HNS:
	// another plugin's (a reference plugin's pod, with HNS's MAC), or one
	// HNS would not delete. Their addresses stay taken in IPAM too, as DEL
	// keeps an address while the endpoint may hold it.
	var held []types.GCAttachment
	// left are the endpoints GC leaves in HNS, whoever made them: IPAM must
	// keep their addresses reserved (ipamGC).
	var left []*hnslb.Endpoint
	if network != nil {
		valid := map[string]bool{}
		for _, a := range s.conf.validAttachments() {
			valid[endpointName(a.ContainerID, s.conf.Network, a.IfName)] = true
			valid[legacyEndpointName(a.ContainerID, a.IfName)] = true
		}
		eps, err := s.hns.ListEndpointsOfNetwork(ctx, network.ID)
		if err != nil {
			// Which addresses endpoints hold is not known, so IPAM gets
			// no GC either (the spec's forwarding waits for the retry).
			return hnsError("list HNS endpoints of "+network.Name, err)
		}
		for i := range eps {
			ep := &eps[i]
			if valid[ep.Name] || ep.IsRemote() {
				left = append(left, ep)
				continue
			}
			if !s.conf.ours(ep) {
				left = append(left, ep)
				if containerID, ifName, ok := attachmentOf(ep.Name, s.conf.Network); ok {
					held = append(held, types.GCAttachment{ContainerID: containerID, IfName: ifName})
				}
				continue
			}
			a := s.conf.endpointAttachment(ep.Name)
			if err := s.hns.deleteUntilGone(ctx, ep); err != nil {
				errs = append(errs, err)
				left = append(left, ep)
				held = append(held, a)
				continue
			}
			if s.conf.hnsIPAM() {
				continue // HNS took the address back with the endpoint
			}
			if err := s.releaseAddress(ctx, a); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if !s.conf.hnsIPAM() {
		if err := s.ipamGC(ctx, held, left); err != nil && !incompatible(err) {
			errs = append(errs, err)
		}
	}
	return gcError(errs)
}

// gcError is GC's one answer for all it could not do. skel prints a single
// CNI error, the first it finds in a join, and the spec asks GC to report
// the errors, so one error carries every failure's text: code 11 when each
// is worth retrying (HNS unreachable), else 999.
func gcError(errs []error) error {
	if len(errs) <= 1 {
		return errors.Join(errs...)
	}
	code := types.ErrTryAgainLater
	var texts []string
	for _, err := range errs {
		var te *types.Error
		if !errors.As(err, &te) || te.Code != types.ErrTryAgainLater {
			code = types.ErrInternal
		}
		texts = append(texts, err.Error())
	}
	return types.NewError(code, fmt.Sprintf("GC met %d failures", len(errs)), strings.Join(texts, "; "))
}

// ipamGC passes GC on to IPAM with the attachments it must keep: the
// runtime's, those whose endpoint GC left in HNS (held), the source VIP
// reservations, which share IPAM's store with the pods and which no
// runtime lists (package sourcevipipam), and, for host-local, whichever
// attachment reserved an address an endpoint left in HNS holds (left);
// under both keys the list has had, so an IPAM that reads either keeps the
// same ones.
func (s *session) ipamGC(ctx context.Context, held []types.GCAttachment, left []*hnslb.Endpoint) error {
	data, err := s.releaseStdin(ctx)
	if err != nil {
		return err
	}
	var conf map[string]json.RawMessage
	if err := json.Unmarshal(data, &conf); err != nil {
		return types.NewError(types.ErrDecodingFailure, "malformed network configuration", err.Error())
	}
	holders, err := s.hostLocalHolders(data, left)
	if err != nil {
		return err
	}
	var keep []types.GCAttachment
	for _, a := range slices.Concat(s.conf.validAttachments(), held, sourcevipipam.Attachments(), holders) {
		if !slices.Contains(keep, a) {
			keep = append(keep, a)
		}
	}
	list, err := json.Marshal(keep)
	if err != nil {
		return internal("encode the valid attachments: %v", err)
	}
	conf["cni.dev/valid-attachments"], conf["cni.dev/attachments"] = list, list
	if data, err = json.Marshal(conf); err != nil {
		return internal("re-encode configuration: %v", err)
	}
	return s.delegate(ctx, "GC", "", "", data)
}

// hostLocalHolders are the attachments host-local's store reserves the
// endpoints' addresses under, when host-local is the IPAM. Its GC (containernetworking/plugins
// v1.10.0) releases every reservation whose attachment the list leaves
// out, and only its store says which attachment reserved an address: a
// source VIP reserved by hand under another attachment than the scripts'
// (sourcevipipam), a pod another plugin wired under another interface name
// than its endpoint's name says. An address an endpoint holds stays
// reserved, as DEL keeps it while the endpoint may hold it. A store it
// cannot read answers an error and IPAM gets no GC.
func (s *session) hostLocalHolders(stdin []byte, endpoints []*hnslb.Endpoint) ([]types.GCAttachment, error) {
	if s.conf.IPAM.Type != "host-local" || len(endpoints) == 0 {
		return nil, nil
	}
	dir, err := hostlocalstore.Dir(stdin)
	if err != nil {
		return nil, types.NewError(types.ErrDecodingFailure, "malformed network configuration", err.Error())
	}
	// The store holds at most the pod subnet; the endpoints can be every
	// remote endpoint of an overlay cluster, so the store is read once.
	reserved, err := hostlocalstore.Reservations(dir)
	if err != nil {
		return nil, types.NewError(types.ErrIOFailure, "read host-local's store "+dir, err.Error())
	}
	var out []types.GCAttachment
	for _, ep := range endpoints {
		for _, c := range ep.IpConfigurations {
			a, err := netip.ParseAddr(c.IpAddress)
			if holder, ok := reserved[a.Unmap()]; err == nil && ok {
				out = append(out, holder)
			}
		}
	}
	return out, nil
}

// validAttachments are the attachments the runtime still has, under
// either key GC's list has had: CNI 1.1.0 as released named it
// "cni.dev/attachments", libcni sends "cni.dev/valid-attachments" (and,
// since the spec took that name, both). A runtime written to the released
// text sends only the first; reading that as no list would delete every
// pod's endpoint.
func (n *NetConf) validAttachments() []types.GCAttachment {
	var out []types.GCAttachment
	for _, a := range slices.Concat(n.ValidAttachments, n.SpecAttachments) {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// endpointAttachment is the attachment an endpoint hnscni made stands for,
// by its name or by the name an earlier release gave it.
func (n *NetConf) endpointAttachment(endpointName string) types.GCAttachment {
	containerID, ifName, ok := attachmentOf(endpointName, n.Network)
	if !ok {
		containerID, ifName, _ = legacyAttachmentOf(endpointName)
	}
	return types.GCAttachment{ContainerID: containerID, IfName: ifName}
}

// releaseAddress runs IPAM DEL for an attachment.
func (s *session) releaseAddress(ctx context.Context, a types.GCAttachment) error {
	// A release must work with the network gone.
	data, err := s.releaseStdin(ctx)
	if err != nil {
		return err
	}
	return s.delegate(ctx, "DEL", a.ContainerID, a.IfName, data)
}

// delegate runs the IPAM plugin for a command on another attachment than
// the current one (invoke.Delegate* always pass the current one).
func (s *session) delegate(ctx context.Context, command, containerID, ifName string, data []byte) error {
	paths := filepath.SplitList(os.Getenv("CNI_PATH"))
	path, err := invoke.FindInPath(s.conf.IPAM.Type, paths)
	if err != nil {
		return err
	}
	return s.ipamError(ctx, invoke.ExecPluginWithoutResult(ctx, path, data, &invoke.Args{
		Command:     command,
		ContainerID: containerID,
		IfName:      ifName,
		Path:        os.Getenv("CNI_PATH"),
	}, nil))
}

// incompatible reports a delegated plugin refusing a command its CNI
// version lacks (GC and STATUS are 1.1).
func incompatible(err error) bool {
	var te *types.Error
	return errors.As(err, &te) && te.Code == types.ErrIncompatibleCNIVersion
}
