//go:build e2e

package e2e

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

const (
	testNamespace = "e2e-controlplane"
	// eventWait bounds how long a watch may take to deliver an event or to
	// end; it is a deadline for a hung test, not a speed assertion.
	eventWait = time.Minute
)

// TestControlPlane proves the control plane is a faithful stand-in for a
// cluster as hnsproxy sees it: objects written by an admin are readable and
// watchable by the system:kube-proxy identity, that identity can do nothing
// more than the bootstrap system:node-proxier role allows, and everything
// survives an apiserver restart.
func TestControlPlane(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	cp := framework.StartForTest(t)
	t.Logf("etcd and kube-apiserver ready in %v at %s", time.Since(start).Round(time.Millisecond), cp.APIServerURL())
	admin, proxy := cp.AdminClient(t), cp.KubeProxyClient(t)

	node, err := framework.RegisterWindowsNode(ctx, admin, framework.WindowsNode{
		Name:        "win-a",
		PodCIDRs:    []string{"10.244.1.0/24", "fd00:10:244:1::/64"},
		InternalIPs: []string{"10.240.0.10", "fd00:10:240::10"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := createService(ctx, t, admin, "web")
	slice := createEndpointSlice(ctx, t, admin, svc, node, "10.244.1.5", "10.244.1.6")

	// Dual-stack allocation from both service ranges.
	if len(svc.Spec.ClusterIPs) != 2 {
		t.Fatalf("service %s got ClusterIPs %v, want one per family", svc.Name, svc.Spec.ClusterIPs)
	}
	for i, ip := range svc.Spec.ClusterIPs {
		if !netip.MustParsePrefix(cp.ServiceCIDRs()[i]).Contains(netip.MustParseAddr(ip)) {
			t.Errorf("ClusterIP %s is outside service CIDR %s", ip, cp.ServiceCIDRs()[i])
		}
	}

	t.Run("kube-proxy identity reads what it needs", func(t *testing.T) {
		assertProxyView(ctx, t, proxy, svc, slice, node)
	})
	t.Run("kube-proxy identity watches services and endpointslices", func(t *testing.T) {
		svcWatch, err := proxy.CoreV1().Services(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{ResourceVersion: svc.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer svcWatch.Stop()
		sliceWatch, err := proxy.DiscoveryV1().EndpointSlices(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{ResourceVersion: slice.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer sliceWatch.Stop()
		api := createService(ctx, t, admin, "api")
		apiSlice := createEndpointSlice(ctx, t, admin, api, node, "10.244.1.7")
		waitForAdded(t, svcWatch, api.UID)
		waitForAdded(t, sliceWatch, apiSlice.UID)
	})
	t.Run("kube-proxy identity holds no more than system:node-proxier", func(t *testing.T) {
		assertLeastPrivilege(ctx, t, admin, proxy, svc, node)
	})
	t.Run("objects and access survive an apiserver restart", func(t *testing.T) {
		w, err := proxy.CoreV1().Services(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		restart := time.Now()
		if err := cp.RestartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("kube-apiserver restarted and ready in %v", time.Since(restart).Round(time.Millisecond))
		waitForWatchEnd(t, w) // clients see the outage; informers re-list on it
		assertProxyView(ctx, t, proxy, svc, slice, node)
	})
}

// TestControlPlaneDetached covers the shell script's path: a detached
// control plane is found again from its directory and stopped by PID.
func TestControlPlaneDetached(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cp, err := framework.Start(ctx, dir, framework.Options{Detach: true})
	if err != nil {
		t.Fatal(err)
	}
	found, err := framework.Open(dir)
	if err != nil {
		t.Fatal(errors.Join(err, cp.Stop()))
	}
	if !slices.Equal(found.Env(), cp.Env()) {
		t.Errorf("Open(%s).Env() = %v, want %v", dir, found.Env(), cp.Env())
	}
	if err := found.Stop(); err != nil {
		t.Fatal(errors.Join(err, cp.Stop()))
	}
	cfg, err := cp.AdminConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 5 * time.Second
	if _, err := kubernetes.NewForConfigOrDie(cfg).Discovery().ServerVersion(); err == nil {
		t.Fatal("kube-apiserver still answers after Stop")
	}
	if _, err := framework.Open(dir); err == nil {
		t.Error("Open found a control plane after Stop")
	}
}

func createService(ctx context.Context, t *testing.T, client kubernetes.Interface, name string) *corev1.Service {
	t.Helper()
	svc, err := client.CoreV1().Services(testNamespace).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicyPreferDualStack),
			Ports: []corev1.ServicePort{{
				Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080),
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// createEndpointSlice creates the IPv4 slice an EndpointSlice controller
// would, with ready endpoints on node at the given pod addresses.
func createEndpointSlice(ctx context.Context, t *testing.T, client kubernetes.Interface, svc *corev1.Service, node *corev1.Node, podIPs ...string) *discoveryv1.EndpointSlice {
	t.Helper()
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: svc.Name + "-ipv4",
			Labels: map[string]string{
				discoveryv1.LabelServiceName: svc.Name,
				discoveryv1.LabelManagedBy:   "e2e.hnsproxy.io",
			},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080)}},
	}
	for _, ip := range podIPs {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
			NodeName:   ptr.To(node.Name),
		})
	}
	created, err := client.DiscoveryV1().EndpointSlices(testNamespace).Create(ctx, slice, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// assertProxyView lists, as kube-proxy does, and finds exactly what the
// admin wrote.
func assertProxyView(ctx context.Context, t *testing.T, proxy kubernetes.Interface, svc *corev1.Service, slice *discoveryv1.EndpointSlice, node *corev1.Node) {
	t.Helper()
	services, err := proxy.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("kube-proxy listing services: %v", err)
	}
	gotSvc := findByUID(services.Items, svc.UID)
	if gotSvc == nil {
		t.Fatalf("kube-proxy's service list lacks %s/%s", svc.Namespace, svc.Name)
	}
	if !slices.Equal(gotSvc.Spec.ClusterIPs, svc.Spec.ClusterIPs) {
		t.Errorf("service ClusterIPs read back %v, want %v", gotSvc.Spec.ClusterIPs, svc.Spec.ClusterIPs)
	}

	sliceList, err := proxy.DiscoveryV1().EndpointSlices(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + svc.Name,
	})
	if err != nil {
		t.Fatalf("kube-proxy listing endpointslices: %v", err)
	}
	gotSlice := findByUID(sliceList.Items, slice.UID)
	if gotSlice == nil {
		t.Fatalf("kube-proxy's endpointslice list lacks %s/%s", slice.Namespace, slice.Name)
	}
	if got, want := endpointAddresses(gotSlice), endpointAddresses(slice); !slices.Equal(got, want) {
		t.Errorf("endpoint addresses read back %v, want %v", got, want)
	}

	gotNode, err := proxy.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("kube-proxy getting its node: %v", err)
	}
	if !slices.Equal(gotNode.Spec.PodCIDRs, node.Spec.PodCIDRs) || gotNode.Labels[corev1.LabelOSStable] != "windows" {
		t.Errorf("node read back with podCIDRs %v and os %q, want %v and windows",
			gotNode.Spec.PodCIDRs, gotNode.Labels[corev1.LabelOSStable], node.Spec.PodCIDRs)
	}
	if len(gotNode.Status.Addresses) != len(node.Status.Addresses) {
		t.Errorf("node addresses read back %v, want %v", gotNode.Status.Addresses, node.Status.Addresses)
	}
}

// assertLeastPrivilege checks that system:kube-proxy's access comes from the
// bootstrap binding and that it cannot write or read beyond it.
func assertLeastPrivilege(ctx context.Context, t *testing.T, admin, proxy kubernetes.Interface, svc *corev1.Service, node *corev1.Node) {
	t.Helper()
	binding, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, "system:node-proxier", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("bootstrap ClusterRoleBinding system:node-proxier: %v", err)
	}
	if binding.RoleRef.Name != "system:node-proxier" || len(binding.Subjects) != 1 ||
		binding.Subjects[0].Kind != "User" || binding.Subjects[0].Name != "system:kube-proxy" {
		t.Errorf("system:node-proxier binds %s to %+v, want the system:node-proxier role to User system:kube-proxy", binding.RoleRef.Name, binding.Subjects)
	}

	forbidden := map[string]func() error{
		"create a service": func() error {
			_, err := proxy.CoreV1().Services(testNamespace).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "not-allowed"},
				Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
			}, metav1.CreateOptions{})
			return err
		},
		"get a single service": func() error {
			_, err := proxy.CoreV1().Services(testNamespace).Get(ctx, svc.Name, metav1.GetOptions{})
			return err
		},
		"delete an endpointslice": func() error {
			return proxy.DiscoveryV1().EndpointSlices(testNamespace).Delete(ctx, svc.Name+"-ipv4", metav1.DeleteOptions{})
		},
		"update a node": func() error {
			n := node.DeepCopy()
			n.Labels["e2e"] = "changed"
			_, err := proxy.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
			return err
		},
		"list pods": func() error {
			_, err := proxy.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
			return err
		},
		"list secrets": func() error {
			_, err := proxy.CoreV1().Secrets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
			return err
		},
	}
	for what, do := range forbidden {
		if err := do(); !apierrors.IsForbidden(err) {
			t.Errorf("system:kube-proxy may %s: got %v, want Forbidden", what, err)
		}
	}
	// Events are the one write kube-proxy needs.
	if _, err := proxy.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, &corev1.Event{
		// A cluster-scoped involved object puts the event in "default".
		ObjectMeta:     metav1.ObjectMeta{Name: "e2e-event", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node.Name},
		Reason:         "Starting", Message: "e2e", Type: corev1.EventTypeNormal,
	}, metav1.CreateOptions{}); err != nil {
		t.Errorf("system:kube-proxy creating an event: %v", err)
	}
}

func findByUID[T any, PT interface {
	*T
	GetUID() types.UID
}](items []T, uid types.UID) PT {
	for i := range items {
		if p := PT(&items[i]); p.GetUID() == uid {
			return p
		}
	}
	return nil
}

func endpointAddresses(slice *discoveryv1.EndpointSlice) []string {
	var out []string
	for _, ep := range slice.Endpoints {
		out = append(out, ep.Addresses...)
	}
	return out
}

func waitForAdded(t *testing.T, w watch.Interface, uid types.UID) {
	t.Helper()
	awaitWatch(t, w, "an ADDED event for "+string(uid), func(ev watch.Event, open bool) bool {
		obj, isMeta := ev.Object.(metav1.Object)
		return open && isMeta && ev.Type == watch.Added && obj.GetUID() == uid
	})
}

func waitForWatchEnd(t *testing.T, w watch.Interface) {
	t.Helper()
	awaitWatch(t, w, "the end of the watch", func(_ watch.Event, open bool) bool { return !open })
}

// awaitWatch reads w until done accepts an event (open is false once the
// watch has ended) and fails t if the watch ends first or eventWait passes.
func awaitWatch(t *testing.T, w watch.Interface, what string, done func(ev watch.Event, open bool) bool) {
	t.Helper()
	deadline := time.After(eventWait)
	for {
		select {
		case ev, open := <-w.ResultChan():
			if done(ev, open) {
				return
			}
			if !open {
				t.Fatalf("watch ended while waiting for %s", what)
			}
		case <-deadline:
			t.Fatalf("no %s within %v", what, eventWait)
		}
	}
}
