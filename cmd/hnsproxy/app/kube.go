package app

import (
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/proxier"
)

// labelServiceProxyName marks Services another proxy implements; kube-proxy
// ignores them, and so does hnsproxy.
const labelServiceProxyName = "service.kubernetes.io/service-proxy-name"

// newKubeClient builds the API client the way kube-proxy does: the
// kubeconfig and --master if given, else in-cluster.
func newKubeClient(cfg *options.Config) (kubernetes.Interface, error) {
	var rc *rest.Config
	var err error
	if cfg.Kubeconfig == "" && cfg.Master == "" {
		klog.InfoS("Neither kubeconfig file nor master URL was specified, falling back to in-cluster config")
		rc, err = rest.InClusterConfig()
	} else {
		rc, err = kubeconfigClientConfig(cfg.Kubeconfig, cfg.Master, os.Getenv)
	}
	if err != nil {
		return nil, fmt.Errorf("API server client: %w", err)
	}
	rc.AcceptContentTypes = cfg.AcceptContentTypes
	rc.ContentType = cfg.ContentType
	rc.QPS = cfg.QPS
	rc.Burst = cfg.Burst
	rc.UserAgent = "hnsproxy/" + Version().GitVersion
	return kubernetes.NewForConfig(rc)
}

// kubeconfigClientConfig loads the kubeconfig (if any) as clientcmd does,
// with the files it names resolved for a HostProcess container first
// (options.ExpandKubeconfigPaths; clientcmd would take them for paths
// relative to the kubeconfig), and applies --master over it.
func kubeconfigClientConfig(path, master string, getenv func(string) string) (*rest.Config, error) {
	loaded := clientcmdapi.NewConfig()
	if path != "" {
		var err error
		if loaded, err = clientcmd.LoadFromFile(path); err != nil {
			return nil, err
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

// proxiedLists narrows the proxier's Service and EndpointSlice lists as
// kube-proxy's are: Services neither headless nor implemented by another
// proxy, slices not of a headless Service (DNS alone serves those). The
// slices of another proxy's Services are left out too: the EndpointSlice
// controller copies the label onto them, and no Service here reads them.
func proxiedLists() (services, slices func(*metav1.ListOptions), err error) {
	noProxyName, err := labels.NewRequirement(labelServiceProxyName, selection.DoesNotExist, nil)
	if err != nil {
		return nil, nil, err
	}
	noHeadless, err := labels.NewRequirement(v1.IsHeadlessService, selection.DoesNotExist, nil)
	if err != nil {
		return nil, nil, err
	}
	serviceLabels := labels.NewSelector().Add(*noProxyName).String()
	notHeadless := fields.OneTermNotEqualSelector("spec.clusterIP", v1.ClusterIPNone).String()
	sliceLabels := labels.NewSelector().Add(*noProxyName, *noHeadless).String()
	services = func(o *metav1.ListOptions) { o.LabelSelector, o.FieldSelector = serviceLabels, notHeadless }
	slices = func(o *metav1.ListOptions) { o.LabelSelector = sliceLabels }
	return services, slices, nil
}

// newNodeInformers returns the informer factory for this node only, its
// objects trimmed (proxier.TrimForCache).
func newNodeInformers(client kubernetes.Interface, cfg *options.Config) informers.SharedInformerFactory {
	return informers.NewSharedInformerFactoryWithOptions(client, cfg.ConfigSyncPeriod, informers.WithTransform(proxier.TrimForCache),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", cfg.NodeName).String()
		}))
}

// nodeSource reads this node from the node informer's cache.
type nodeSource struct {
	name   string
	lister corelisters.NodeLister
}

// Node is nil until the informer has seen the node.
func (n nodeSource) Node() *v1.Node {
	node, err := n.lister.Get(n.name)
	if err != nil {
		return nil
	}
	return node
}
