package app

import (
	"context"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/internal/heapfloor"
)

// startHeapFloor starts --gc-heap-floor for the daemon's life, unless the
// operator paces the collector through the environment; nil when it does
// not run.
func startHeapFloor(ctx context.Context, floor resource.Quantity, getenv func(string) string) *heapfloor.Floor {
	f, setting := heapfloor.Start(uint64(max(floor.Value(), 0)), getenv)
	logger := klog.FromContext(ctx)
	switch {
	case setting != "":
		logger.Info("The Go collector is paced by the environment; --gc-heap-floor is ignored", "variable", setting, "value", getenv(setting))
	case f != nil:
		logger.V(2).Info("Keeping the Go heap goal at or above the floor", "floor", floor.String())
	}
	return f
}
