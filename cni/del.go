package cni

import "context"

// cmdDel removes the attachment's endpoint, then releases its address.
// Whatever is already gone counts as removed. The address is released only
// once the endpoint is surely gone, so it is never handed out twice.
// Without IPAM, deleting the endpoint returns its address to HNS. A network
// already gone does not fail the release (releasePodCIDR).
func cmdDel(ctx context.Context, s *session) error {
	if _, err := s.removeAttachment(ctx, false); err != nil {
		return err
	}
	if s.conf.hnsIPAM() {
		return nil
	}
	return s.ipamDel(ctx)
}
