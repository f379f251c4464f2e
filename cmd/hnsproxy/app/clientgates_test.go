package app

import (
	"testing"

	clientfeatures "k8s.io/client-go/features"
)

// The command hands its --feature-gates to client-go, as kube-proxy does:
// WatchListClient=false stops the informers streaming their lists.
func TestFeatureGatesReachClientGo(t *testing.T) {
	prev := clientfeatures.FeatureGates()
	t.Cleanup(func() { clientfeatures.ReplaceFeatureGates(prev) })
	t.Setenv("KUBE_NETWORK", "")
	path := t.TempDir() + "/kube-proxy.yaml"
	if out, err := execute(t, "--network-name=vxlan0", "--feature-gates=WatchListClient=false", "--write-config-to="+path); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		t.Error("--feature-gates=WatchListClient=false did not reach client-go")
	}
}
