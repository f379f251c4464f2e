package proxier

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/reconciler"
)

// ReasonNetworkChanged is the Warning event on the Node when the HNS network
// hnsproxy programs is gone or was replaced, and hnsproxy stops to start
// again on the network HNS has now.
const ReasonNetworkChanged = "HNSNetworkChanged"

// noteNetworkChanged stops Run when err says the network is gone or
// replaced (reconciler/network.go): everything read of the network at start
// (its ID, type, subnets, source VIP, routes) may be wrong, and a start
// reads it all again. Callers hold p.mu.
func (p *Proxier) noteNetworkChanged(ctx context.Context, err error) {
	var changed *reconciler.NetworkChangedError
	if !errors.As(err, &changed) || p.stopErr != nil {
		return
	}
	p.stopErr = fmt.Errorf("%w: hnsproxy stops so that a start programs the network HNS has now (the DaemonSet's pod or the Windows service restarts it)", changed)
	klog.FromContext(ctx).Error(changed, "Stopping: what hnsproxy read of its HNS network at start no longer holds")
	p.warnNode(ctx, ReasonNetworkChanged, "Sync", "%v; hnsproxy restarts to program the network HNS has now", changed)
	if p.stopRun != nil {
		p.stopRun(p.stopErr)
	}
}
