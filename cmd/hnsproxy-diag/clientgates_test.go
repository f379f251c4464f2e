package main

import (
	"io"
	"testing"

	clientfeatures "k8s.io/client-go/features"
)

// TestFeatureGatesReachClientGo: hnsproxy-diag takes hnsproxy's flags and
// --config, whose --feature-gates carry client-go's gates (WatchListClient,
// the CBOR ones); its API client reads them as the daemon's does, not
// client-go's own defaults and KUBE_FEATURE_* variables.
func TestFeatureGatesReachClientGo(t *testing.T) {
	prev := clientfeatures.FeatureGates()
	t.Cleanup(func() { clientfeatures.ReplaceFeatureGates(prev) })
	cmd := newCommand()
	// No HNS to read here (sim is refused): the command fails after it
	// took its configuration.
	cmd.SetArgs([]string{"--feature-gates=WatchListClient=false", "--hns-endpoint=sim", "--network-name=cbr0", "--hostname-override=win-1"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil {
		t.Fatal("a diagnosis without HNS succeeded")
	}
	if clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		t.Error("--feature-gates=WatchListClient=false did not reach client-go")
	}
}
