//go:build linux

package framework

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Backend is one endpoint of a Service: a wired pod and its condition.
type Backend struct {
	Pod Pod
	// Terminating: the pod is being deleted but still serving (ready
	// false, serving true, terminating true), as the EndpointSlice
	// controller publishes it during graceful shutdown.
	Terminating bool
}

// Backends makes ready backends of pods.
func Backends(pods ...[]Pod) []Backend {
	var out []Backend
	for _, ps := range pods {
		for _, p := range ps {
			out = append(out, Backend{Pod: p})
		}
	}
	return out
}

// ApplyService creates svc and the EndpointSlices the endpointslice
// controller would publish for it (one per IP family of the Service, ports
// by name with the Service's target ports), since no controller manager
// runs here. It returns the Service as stored (with its ClusterIPs and node
// ports).
func ApplyService(ctx context.Context, c *Cluster, svc *corev1.Service, backends []Backend) (*corev1.Service, error) {
	created, err := c.Admin.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	if len(svc.Status.LoadBalancer.Ingress) > 0 {
		created.Status.LoadBalancer = svc.Status.LoadBalancer
		if created, err = c.Admin.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("service %s/%s status: %w", svc.Namespace, svc.Name, err)
		}
	}
	for _, slice := range EndpointSlicesFor(created, backends) {
		if _, err := c.Admin.DiscoveryV1().EndpointSlices(svc.Namespace).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("endpoints of %s/%s: %w", svc.Namespace, svc.Name, err)
		}
	}
	return created, nil
}

// UpdateEndpoints replaces the endpoints of the Service's EndpointSlices.
func UpdateEndpoints(ctx context.Context, c *Cluster, svc *corev1.Service, backends []Backend) error {
	slices := c.Admin.DiscoveryV1().EndpointSlices(svc.Namespace)
	for _, want := range EndpointSlicesFor(svc, backends) {
		cur, err := slices.Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Endpoints, cur.Ports = want.Endpoints, want.Ports
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations[corev1.EndpointsLastChangeTriggerTime] = want.Annotations[corev1.EndpointsLastChangeTriggerTime]
		if _, err := slices.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// EndpointSlicesFor are svc's EndpointSlices over backends: one per IP
// family the Service has (IPv4 if it names none), each with the backends'
// addresses of that family.
func EndpointSlicesFor(svc *corev1.Service, backends []Backend) []*discoveryv1.EndpointSlice {
	families := svc.Spec.IPFamilies
	if len(families) == 0 {
		families = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	var out []*discoveryv1.EndpointSlice
	for _, fam := range families {
		out = append(out, endpointSliceFor(svc, backends, fam == corev1.IPv6Protocol))
	}
	return out
}

func endpointSliceFor(svc *corev1.Service, backends []Backend, ipv6 bool) *discoveryv1.EndpointSlice {
	name, addressType := svc.Name+"-ipv4", discoveryv1.AddressTypeIPv4
	if ipv6 {
		name, addressType = svc.Name+"-ipv6", discoveryv1.AddressTypeIPv6
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: svc.Namespace,
			Labels: map[string]string{
				discoveryv1.LabelServiceName: svc.Name,
				discoveryv1.LabelManagedBy:   "endpointslice-controller.k8s.io",
			},
			// The controller stamps the time of the change that made this
			// version; hnsproxy's network programming latency starts there.
			Annotations: map[string]string{
				corev1.EndpointsLastChangeTriggerTime: time.Now().UTC().Format(time.RFC3339Nano),
			},
		},
		AddressType: addressType,
	}
	for _, p := range svc.Spec.Ports {
		slice.Ports = append(slice.Ports, discoveryv1.EndpointPort{
			Name:     ptr.To(p.Name),
			Protocol: ptr.To(p.Protocol),
			Port:     ptr.To(p.TargetPort.IntVal),
		})
	}
	for _, b := range backends {
		addr := b.Pod.Addr(ipv6)
		if !addr.IsValid() {
			continue // a single-stack pod has no address of this family
		}
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{addr.String()},
			Conditions: discoveryv1.EndpointConditions{
				Ready:       ptr.To(!b.Terminating),
				Serving:     ptr.To(true),
				Terminating: ptr.To(b.Terminating),
			},
			NodeName:  ptr.To(b.Pod.Node),
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: svc.Namespace, Name: b.Pod.Name},
		})
	}
	return slice
}

// EnsureNamespace creates a namespace unless it exists.
func EnsureNamespace(ctx context.Context, c *Cluster, name string) error {
	_, err := c.Admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
