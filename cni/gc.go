package cni

import (
	"cmp"
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
		// The spec requires the list. libcni sends the runtime's as
		// given: [] when it is empty, null when it is nil, as CRI-O's
		// ocicni gives it for a network no pod runs on; such a node is
		// collected once a pod runs. Read as empty, a runtime's slip
		// would delete every pod's endpoint on the node.
		return invalidConfig("GC needs cni.dev/valid-attachments, the attachments still in use; without it every pod would count as stale")
	}
	network, err := s.network(ctx)
	if err != nil {
		return err
	}
	var run gcRun
	listed := map[string]bool{} // the names of the endpoints the listing showed
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
			listed[ep.Name] = true
			if valid[ep.Name] || ep.IsRemote() {
				run.left = append(run.left, ep)
				continue
			}
			s.collect(ctx, ep, &run)
		}
	}
	if !s.conf.hnsIPAM() {
		if err := s.ipamGC(ctx, network != nil, listed, &run); err != nil && !incompatible(err) {
			run.errs = append(run.errs, err)
		}
	}
	return gcError(run.errs)
}

// gcRun is what one GC did with the endpoints it met.
type gcRun struct {
	// held are the unlisted attachments whose endpoint GC leaves in HNS:
	// another plugin's (a reference plugin's pod, with HNS's MAC), or one
	// HNS would not delete. Their addresses stay taken in IPAM too, as DEL
	// keeps an address while the endpoint may hold it.
	held []types.GCAttachment
	// left are the endpoints GC leaves in HNS, whoever made them: IPAM must
	// keep their addresses reserved (ipamGC).
	left []*hnslb.Endpoint
	errs []error
}

// collect deletes a stale endpoint of hnscni's and releases its address,
// and leaves one it did not make, or one HNS would not delete, holding its
// attachment's address.
func (s *session) collect(ctx context.Context, ep *hnslb.Endpoint, run *gcRun) {
	if !s.conf.ours(ep) {
		run.left = append(run.left, ep)
		if containerID, ifName, ok := attachmentOf(ep.Name, s.conf.Network); ok {
			run.held = append(run.held, types.GCAttachment{ContainerID: containerID, IfName: ifName})
		}
		return
	}
	a := s.conf.endpointAttachment(ep.Name)
	if err := s.hns.deleteUntilGone(ctx, ep); err != nil {
		run.errs = append(run.errs, err)
		run.left = append(run.left, ep)
		run.held = append(run.held, a)
		return
	}
	if s.conf.hnsIPAM() {
		return // HNS took the address back with the endpoint
	}
	if err := s.releaseAddress(ctx, a); err != nil {
		run.errs = append(run.errs, err)
	}
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
// same ones. With host-local, whose store says what its GC would release,
// the endpoints of those attachments are first looked for where the
// listing did not show them (collectUnlisted); withNetwork is whether
// there was a network to list.
func (s *session) ipamGC(ctx context.Context, withNetwork bool, listed map[string]bool, run *gcRun) error {
	data, err := s.releaseStdin(ctx)
	if err != nil {
		return err
	}
	var conf map[string]json.RawMessage
	if err := json.Unmarshal(data, &conf); err != nil {
		return types.NewError(types.ErrDecodingFailure, "malformed network configuration", err.Error())
	}
	reserved, err := s.hostLocalReservations(data)
	if err != nil {
		return err
	}
	if withNetwork {
		s.collectUnlisted(ctx, reserved, listed, run)
	}
	list, err := json.Marshal(s.keptAttachments(reserved, run))
	if err != nil {
		return internal("encode the valid attachments: %v", err)
	}
	conf["cni.dev/valid-attachments"], conf["cni.dev/attachments"] = list, list
	if data, err = json.Marshal(conf); err != nil {
		return internal("re-encode configuration: %v", err)
	}
	return s.delegate(ctx, "GC", "", "", data)
}

// keptAttachments are the attachments IPAM's GC is told to keep (ipamGC),
// each once.
func (s *session) keptAttachments(reserved map[netip.Addr]types.GCAttachment, run *gcRun) []types.GCAttachment {
	var keep []types.GCAttachment
	for _, a := range slices.Concat(s.conf.validAttachments(), run.held, sourcevipipam.Attachments(), holders(reserved, run.left)) {
		if !slices.Contains(keep, a) {
			keep = append(keep, a)
		}
	}
	return keep
}

// collectUnlisted looks up, by its endpoint's names, each attachment whose
// address host-local's GC would release while the listing showed no
// endpoint of it, and collects what it finds as if listed. A listing can
// leave out an endpoint HNS holds (hcn lists by enumerating, then opening
// each object; docs/simulator.md, Faults.LeftOutOfListings): taken at its
// word, GC left a stale endpoint in HNS and released its address for the
// next pod to be refused. The lookups ask again while HNS answers "not
// found" (hnsgets.go) and cost nothing where no reservation is stale,
// which is the norm, since DEL releases its address. An attachment HNS
// cannot say of keeps its address.
func (s *session) collectUnlisted(ctx context.Context, reserved map[netip.Addr]types.GCAttachment, listed map[string]bool, run *gcRun) {
	kept := s.keptAttachments(reserved, run)
	var stale []types.GCAttachment
	for _, a := range reserved {
		if !slices.Contains(kept, a) && !slices.Contains(stale, a) &&
			!listed[endpointName(a.ContainerID, s.conf.Network, a.IfName)] && !listed[legacyEndpointName(a.ContainerID, a.IfName)] {
			stale = append(stale, a)
		}
	}
	slices.SortFunc(stale, func(a, b types.GCAttachment) int {
		return cmp.Or(strings.Compare(a.ContainerID, b.ContainerID), strings.Compare(a.IfName, b.IfName))
	})
	for _, a := range stale {
		ep, err := s.endpointOf(ctx, a, s.hns.GetEndpointByName)
		switch {
		case err != nil:
			run.errs = append(run.errs, err)
			run.held = append(run.held, a)
		case ep != nil:
			s.collect(ctx, ep, run)
		}
	}
}

// hostLocalReservations is host-local's store, address by address, when
// host-local is the IPAM (nil otherwise). Only its store says which
// attachment reserved an address, and so what its GC
// (containernetworking/plugins v1.10.0), which releases every reservation
// whose attachment the list leaves out, would release. A store it cannot
// read answers an error and IPAM gets no GC.
func (s *session) hostLocalReservations(stdin []byte) (map[netip.Addr]types.GCAttachment, error) {
	if s.conf.IPAM.Type != "host-local" {
		return nil, nil
	}
	dir, err := hostlocalstore.Dir(stdin)
	if err != nil {
		return nil, types.NewError(types.ErrDecodingFailure, "malformed network configuration", err.Error())
	}
	reserved, err := hostlocalstore.Reservations(dir)
	if err != nil {
		return nil, types.NewError(types.ErrIOFailure, "read host-local's store "+dir, err.Error())
	}
	return reserved, nil
}

// holders are the attachments host-local's store reserves the endpoints'
// addresses under: a source VIP reserved by hand under another attachment
// than the scripts' (sourcevipipam), a pod another plugin wired under
// another interface name than its endpoint's name says. An address an
// endpoint holds stays reserved, as DEL keeps it while the endpoint may
// hold it. The endpoints can be every remote endpoint of an overlay
// cluster; the store, read once, holds at most the pod subnet.
func holders(reserved map[netip.Addr]types.GCAttachment, endpoints []*hnslb.Endpoint) []types.GCAttachment {
	if len(reserved) == 0 {
		return nil
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
	return out
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
