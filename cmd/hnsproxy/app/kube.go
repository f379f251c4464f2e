package app

import (
	"os"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/kubeapi"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/proxier"
)

// newKubeClient builds the API client the way kube-proxy does
// (kubeapi.RestConfig).
func newKubeClient(cfg *options.Config) (kubernetes.Interface, error) {
	rc, err := kubeapi.RestConfig(cfg, "hnsproxy/"+Version().GitVersion, os.Getenv)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(rc)
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
