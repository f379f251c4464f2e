package app

import (
	"context"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/sourcevip"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// runCleanup is --cleanup: it deletes the HNS objects hnsproxy owns on this
// node (reconciler.Cleanup: what --state-file records, never another's),
// then gives a source VIP it reserved back to the CNI IPAM (only once the
// endpoint carrying it is gone, so no pod can get an address still in
// use), and returns. It needs no API server and no HNS network. hns, if not nil,
// replaces the client cfg selects.
//
// A cleanup stopped before it finished (SIGTERM, the SCM's stop) failed:
// what it did not delete is still in HNS and in the state file. Its error
// must not read as the stop (context.Canceled), which the supervisor takes
// for a clean exit: a script that goes on after a cleanup exiting 0 would
// go on with hnsproxy's load balancers still in place.
func runCleanup(ctx context.Context, cfg *options.Config, hns hnslb.Client) error {
	err := cleanup(ctx, cfg, hns)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("--cleanup was stopped before it finished; run it again to delete what is left: %s", err)
	}
	return err
}

// cleanup is runCleanup until it is done or stopped.
func cleanup(ctx context.Context, cfg *options.Config, hns hnslb.Client) error {
	logger := klog.FromContext(ctx)
	lock, err := lockState(ctx, logger, cfg.StateFile, 0)
	if err != nil {
		return err
	}
	defer lock.Release()
	if hns == nil {
		if hns, err = newHNSClient(cfg.HNS); err != nil {
			return err
		}
	}
	logger.Info("Cleaning up: deleting the HNS objects hnsproxy owns", "stateFile", cfg.StateFile)
	// The daemon's HNS deadlines (--hns-call-timeout, --hns-list-timeout):
	// a node whose listings need more than the default must be able to
	// clean up too.
	o := hnsCallOptions(ctx, cfg)
	o.StateFile, o.Logger = cfg.StateFile, logger
	res, err := reconciler.Cleanup(ctx, hns, o)
	logger.Info("Cleanup finished", "deletedLoadBalancers", res.DeletedLoadBalancers,
		"deletedEndpoints", res.DeletedEndpoints, "left", len(res.Failed), "stateFileRemoved", res.StateRemoved)
	if err != nil {
		return err
	}
	vip, err := sourcevip.Release(ctx, sourcevip.RecordFile(cfg.StateFile), cfg.CNI.BinDir)
	if vip.IsValid() {
		logger.Info("Released the source VIP to the CNI IPAM", "address", vip)
	}
	return err
}
