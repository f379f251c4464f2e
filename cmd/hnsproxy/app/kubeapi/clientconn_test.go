package kubeapi

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

// clientConnection's settings (--kube-api-qps, --kube-api-burst,
// --kube-api-content-type and acceptContentTypes) reach the API client as
// kube-proxy's createClient hands them over: a cluster that tuned them for
// a large node count gets its limits, not client-go's.
func TestRestConfigCarriesTheClientConnection(t *testing.T) {
	cfg := &options.Config{Master: "https://127.0.0.1:6443", QPS: 7, Burst: 13,
		ContentType: "application/json", AcceptContentTypes: "application/json,application/vnd.kubernetes.protobuf"}
	rc, err := RestConfig(cfg, "hnsproxy/test", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if rc.QPS != 7 || rc.Burst != 13 || rc.ContentType != cfg.ContentType || rc.AcceptContentTypes != cfg.AcceptContentTypes || rc.UserAgent != "hnsproxy/test" {
		t.Errorf("rest config QPS %v burst %d content type %q accept %q user agent %q; want %v %d %q %q hnsproxy/test",
			rc.QPS, rc.Burst, rc.ContentType, rc.AcceptContentTypes, rc.UserAgent, cfg.QPS, cfg.Burst, cfg.ContentType, cfg.AcceptContentTypes)
	}
}

// An empty kubeconfig falls back to the in-cluster configuration only in a
// pod with a service account token file: the environment alone (a
// hostNetwork pod with automountServiceAccountToken: false, or a token
// path that is a directory) is no pod client-go could authenticate from,
// so the start fails on the empty kubeconfig, as kube-proxy's does.
func TestAnEmptyKubeconfigNeedsTheServiceAccountToken(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "kubeconfig.conf")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wasConfig, wasToken := inClusterConfig, serviceAccountToken
	t.Cleanup(func() { inClusterConfig, serviceAccountToken = wasConfig, wasToken })
	inClusterConfig = func() (*rest.Config, error) { return &rest.Config{Host: "https://10.96.0.1:443"}, nil }
	inPod := func(k string) string {
		return map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}[k]
	}
	for _, token := range []string{filepath.Join(t.TempDir(), "none"), t.TempDir()} {
		serviceAccountToken = token
		if rc, err := RestConfig(&options.Config{Kubeconfig: empty}, "hnsproxy", inPod); err == nil {
			t.Errorf("token %s (missing or a directory): an empty kubeconfig gave the in-cluster configuration %s", token, rc.Host)
		}
	}
}
