//go:build linux && benche2e

package main

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

const (
	namespace   = "bench"
	groupLabel  = "bench-group"
	servicePort = 80
	targetPort  = 8080
	// podsPerRemoteNode keeps every pod inside its node's /24.
	podsPerRemoteNode = 200
)

// layout is the cluster's shape: Services in groups that select the same
// Pods (a pod backs groupSize Services, as real pods back several), so
// endpoints = services * podsPerGroup with services/groupSize*podsPerGroup Pods.
type layout struct {
	services, groupSize, podsPerGroup int
	// nodes are the remote nodes the pods run on; 0: as many as hold
	// podsPerRemoteNode each.
	nodes int
}

func (l layout) groups() int { return l.services / l.groupSize }
func (l layout) pods() int   { return l.groups() * l.podsPerGroup }
func (l layout) remoteNodes() int {
	if l.nodes > 0 {
		return l.nodes
	}
	return (l.pods() + podsPerRemoteNode - 1) / podsPerRemoteNode
}

// The address plan. Up to smallPlanNodes remote nodes the cluster CIDR is
// Flannel's default, 10.244.0.0/16: the bench's own node has
// 10.244.0.0/24 and remote node i 10.244.(i+1).0/24. More nodes (up to
// Kubernetes' 5,000 and beyond) take 100.64.0.0/10's /24s in the same
// order.
const (
	smallPlanNodes = 255
	largePlanNodes = 1<<14 - 1
	// A pod's address is .10 to .254 of its node's /24.
	maxPodsPerNode = 245
)

func (l layout) clusterCIDR() string {
	if l.remoteNodes() <= smallPlanNodes {
		return "10.244.0.0/16"
	}
	return "100.64.0.0/10"
}

// podCIDR is node k's: 0 the bench's own, i+1 remote node i.
func (l layout) podCIDR(k int) string {
	if l.remoteNodes() <= smallPlanNodes {
		return fmt.Sprintf("10.244.%d.0/24", k)
	}
	return fmt.Sprintf("100.%d.%d.0/24", 64+k>>8, k&0xff)
}

func (l layout) remotePodCIDR(i int) string { return l.podCIDR(i + 1) }

func serviceName(i int) string  { return fmt.Sprintf("s-%d", i) }
func groupName(g int) string    { return fmt.Sprintf("g-%d", g) }
func podName(g, j int) string   { return fmt.Sprintf("p-%d-%d", g, j) }
func remoteNode(i int) string   { return fmt.Sprintf("remote-%d", i) }
func remoteNodeIP(i int) string { return fmt.Sprintf("10.1.%d.%d", i/250, 1+i%250) }

// podPlace is where pod number n (over all groups) runs and its address:
// spread over the remote nodes, .10 on in each node's /24.
func (l layout) podPlace(n int) (node string, ip string) {
	k := n % l.remoteNodes()
	host := 10 + n/l.remoteNodes()
	prefix := netip.MustParsePrefix(l.remotePodCIDR(k))
	a := prefix.Addr().As4()
	a[3] = byte(host)
	return remoteNode(k), netip.AddrFrom4(a).String()
}

// parallel runs fn(0..n-1) on workers goroutines; the first error wins.
func parallel(n, workers int, fn func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
		err  error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if err != nil || next >= n {
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				if e := fn(i); e != nil {
					mu.Lock()
					if err == nil {
						err = e
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return err
}

const workers = 32

// load creates the namespace (with the ServiceAccount the admission
// plugin wants; no controller makes it here), the remote Node objects,
// the Pods with their status, and the Services.
func load(ctx context.Context, admin kubernetes.Interface, l layout) error {
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := admin.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := parallel(l.remoteNodes(), workers, func(i int) error {
		_, err := framework.RegisterWindowsNode(ctx, admin, framework.WindowsNode{
			Name: remoteNode(i), PodCIDRs: []string{l.remotePodCIDR(i)}, InternalIPs: []string{remoteNodeIP(i)},
		})
		return err
	}); err != nil {
		return err
	}
	if err := parallel(l.pods(), workers, func(n int) error {
		return createPod(ctx, admin, l, n)
	}); err != nil {
		return err
	}
	return parallel(l.services, workers, func(i int) error {
		_, err := admin.CoreV1().Services(namespace).Create(ctx, groupService(serviceName(i), i/l.groupSize), metav1.CreateOptions{})
		return err
	})
}

// groupService is a ClusterIP Service, one TCP port, selecting group g's pods.
func groupService(name string, g int) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{groupLabel: groupName(g)},
			Ports:    []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: servicePort, TargetPort: intstr.FromInt32(targetPort)}},
		},
	}
}

// group is group g's Service names and their cluster IPs (vips, by
// Service number).
func (l layout) group(g int, vips []string) (names, groupVIPs []string) {
	for i := g * l.groupSize; i < (g+1)*l.groupSize; i++ {
		names = append(names, serviceName(i))
	}
	return names, vips[g*l.groupSize : (g+1)*l.groupSize]
}

// createPod creates pod n bound to its node, then sets its status as the
// kubelet would: running, Ready, with its address.
func createPod(ctx context.Context, admin kubernetes.Interface, l layout, n int) error {
	g, j := n/l.podsPerGroup, n%l.podsPerGroup
	return createPodNamed(ctx, admin, l, n, podName(g, j), groupName(g))
}

// createPodNamed creates a pod of group at pod number n's place.
func createPodNamed(ctx context.Context, admin kubernetes.Interface, l layout, n int, name, group string) error {
	node, ip := l.podPlace(n)
	no := false
	pod, err := admin.CoreV1().Pods(namespace).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{groupLabel: group}},
		Spec: corev1.PodSpec{
			NodeName:                     node,
			AutomountServiceAccountToken: &no,
			Containers:                   []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	pod.Status = corev1.PodStatus{
		Phase:  corev1.PodRunning,
		PodIP:  ip,
		PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()},
		},
	}
	_, err = admin.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}

// setReady flips pod n's Ready condition, stamped now (the EndpointSlice
// controller takes its trigger time from the condition's transition).
func setReady(ctx context.Context, admin kubernetes.Interface, l layout, n int, ready bool) error {
	g, j := n/l.podsPerGroup, n%l.podsPerGroup
	pod, err := admin.CoreV1().Pods(namespace).Get(ctx, podName(g, j), metav1.GetOptions{})
	if err != nil {
		return err
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
	_, err = admin.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}

// readyEndpoints counts the ready endpoints of every EndpointSlice in the
// namespace, paged.
func readyEndpoints(ctx context.Context, admin kubernetes.Interface) (int, error) {
	total := 0
	opts := metav1.ListOptions{Limit: 2000}
	for {
		list, err := admin.DiscoveryV1().EndpointSlices(namespace).List(ctx, opts)
		if err != nil {
			return 0, err
		}
		for _, s := range list.Items {
			total += countReady(s.Endpoints)
		}
		if list.Continue == "" {
			return total, nil
		}
		opts.Continue = list.Continue
	}
}

func countReady(eps []discoveryv1.Endpoint) int {
	n := 0
	for _, e := range eps {
		if e.Conditions.Ready == nil || *e.Conditions.Ready {
			n += len(e.Addresses)
		}
	}
	return n
}

// waitSlices waits until the EndpointSlice controller has published every
// endpoint.
func waitSlices(ctx context.Context, admin kubernetes.Interface, want int, timeout time.Duration) error {
	return framework.Poll(ctx, timeout, time.Second, func(ctx context.Context) error {
		got, err := readyEndpoints(ctx, admin)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("%d of %d endpoints ready in EndpointSlices", got, want)
		}
		return nil
	})
}
