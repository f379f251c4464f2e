package kubeapi

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// LabelServiceProxyName marks Services another proxy implements; kube-proxy
// ignores them, and so does hnsproxy.
const LabelServiceProxyName = "service.kubernetes.io/service-proxy-name"

// ProxiedLists narrows the Service and EndpointSlice lists as kube-proxy's
// are: Services neither headless nor implemented by another proxy, slices
// not of a headless Service (DNS alone serves those). The slices of another
// proxy's Services are left out too: the EndpointSlice controller copies
// the label onto them, and no Service here reads them.
func ProxiedLists() (services, slices func(*metav1.ListOptions), err error) {
	noProxyName, err := labels.NewRequirement(LabelServiceProxyName, selection.DoesNotExist, nil)
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
