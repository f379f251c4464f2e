package app

import (
	"context"
	"runtime"

	"k8s.io/klog/v2"
)

// setMaxProcs applies --gomaxprocs for the daemon's life, unless the
// operator set GOMAXPROCS in the environment (the runtime read it at
// start) or asked for Go's default (0). It returns the processors Go code
// runs on afterwards.
func setMaxProcs(ctx context.Context, n int, getenv func(string) string) int {
	logger := klog.FromContext(ctx)
	switch {
	case getenv("GOMAXPROCS") != "":
		logger.Info("GOMAXPROCS is set in the environment; --gomaxprocs is ignored", "value", getenv("GOMAXPROCS"))
	case n > 0:
		runtime.GOMAXPROCS(n)
		logger.V(2).Info("Running Go code on at most this many processors", "gomaxprocs", n)
	}
	return runtime.GOMAXPROCS(0)
}
