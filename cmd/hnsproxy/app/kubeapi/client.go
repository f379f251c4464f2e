package kubeapi

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

// RestConfig is the API client configuration the way kube-proxy builds it:
// the kubeconfig and --master if given (in-cluster where they configure no
// API server and the process runs in a pod), else in-cluster; with cfg's content
// types and rate limits, and userAgent. getenv reads the environment
// (os.Getenv), for a kubeconfig naming files below the sandbox mount point.
func RestConfig(cfg *options.Config, userAgent string, getenv func(string) string) (*rest.Config, error) {
	var rc *rest.Config
	var err error
	if cfg.Kubeconfig == "" && cfg.Master == "" {
		klog.InfoS("Neither kubeconfig file nor master URL was specified, falling back to in-cluster config")
		rc, err = inClusterConfig()
	} else {
		rc, err = clientConfig(cfg.Kubeconfig, cfg.Master, getenv)
		if clientcmd.IsEmptyConfig(err) && inClusterPossible(getenv) {
			// As kube-proxy's loading rules (clientcmd's deferred loading)
			// do: a kubeconfig that configures no API server (an empty
			// file, as a ConfigMap key left empty mounts it) gives way to
			// the pod's service account.
			klog.InfoS("The kubeconfig configures no API server, falling back to in-cluster config", "kubeconfig", cfg.Kubeconfig)
			rc, err = inClusterConfig()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("API server client: %w", err)
	}
	rc.AcceptContentTypes = cfg.AcceptContentTypes
	rc.ContentType = cfg.ContentType
	rc.QPS = cfg.QPS
	rc.Burst = cfg.Burst
	rc.UserAgent = userAgent
	return rc, nil
}

// clientConfig loads the kubeconfig (if any) as clientcmd does, with the
// files it names resolved for a HostProcess container first
// (options.ExpandKubeconfigPaths; clientcmd would take them for paths
// relative to the kubeconfig), and applies --master over it.
func clientConfig(path, master string, getenv func(string) string) (*rest.Config, error) {
	loaded := clientcmdapi.NewConfig()
	if path != "" {
		var err error
		if loaded, err = clientcmd.LoadFromFile(path); err != nil {
			// LoadFromFile names no file in a decoding error; clientcmd's
			// loading rules, which kube-proxy uses, add it, as written (%q
			// would double a Windows path's backslashes).
			return nil, options.WithDecodeHint(fmt.Errorf("error loading config file \"%s\": %w", path, err))
		}
		if err := options.ExpandKubeconfigPaths(loaded, getenv, options.FileExists); err != nil {
			return nil, err
		}
		if err := clientcmd.ResolveLocalPaths(loaded); err != nil {
			return nil, err
		}
	}
	return clientcmd.NewNonInteractiveClientConfig(*loaded, "",
		&clientcmd.ConfigOverrides{ClusterInfo: clientcmdapi.Cluster{Server: master}}, nil).ClientConfig()
}
