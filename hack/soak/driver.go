//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// driver churns Services and EndpointSlices through client-go as users and
// the EndpointSlice controller would: every kind of Service, ports and
// policies changing, endpoints scaling and flipping between ready, serving
// terminating and not serving. Its choices come from a seeded generator.
type driver struct {
	client kubernetes.Interface
	ns     string
	pods   []framework.Pod
	// bigPool are the pods of the big Services (bigServices of them when
	// not empty), each of whose slices names more than bigLeast.
	bigPool  []framework.Pod
	rng      *rand.Rand
	names    []string
	changes  atomic.Int64 // successful writes
	failures atomic.Int64 // writes the apiserver refused or never answered
	// collisions counts specs whose external IP is another Service's
	// cluster IP, a foreign load balancer's frontend or a node address.
	collisions atomic.Int64
	clusterIPs []string // of Services the driver created
	logged     int
	mu         sync.Mutex // one change at a time: the generator is not shared safely
}

const (
	soakServices = 40
	// bigServices over bigPool, when a node's HNS caps backends at 64; each
	// scales between bigLeast pods and the whole pool, so across the cap.
	bigServices = 2
	bigLeast    = 60
	driverPace  = 20 * time.Millisecond
	logFailures = 20 // the first refusals are printed, to tell bugs from outages
)

func newDriver(client kubernetes.Interface, ns string, pods, bigPool []framework.Pod, seed uint64) *driver {
	d := &driver{client: client, ns: ns, pods: pods, bigPool: bigPool, rng: rand.New(rand.NewPCG(seed, seed^0x5eed))}
	for i := range soakServices {
		d.names = append(d.names, fmt.Sprintf("svc-%02d", i))
	}
	if len(bigPool) > bigLeast {
		for i := range bigServices {
			d.names = append(d.names, fmt.Sprintf("%s%d", bigPrefix, i))
		}
	}
	return d
}

const bigPrefix = "big-"

// slicePods are the pods svc's slices draw from, and how many they name at least.
func (d *driver) slicePods(svc string) (pool []framework.Pod, least int) {
	if strings.HasPrefix(svc, bigPrefix) {
		return d.bigPool, bigLeast
	}
	return d.pods, 0
}

// run makes changes until ctx ends.
func (d *driver) run(ctx context.Context) {
	for ctx.Err() == nil {
		d.step(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(driverPace):
		}
	}
}

// burst makes n changes at once (the proxy killer uses it to catch a sync).
func (d *driver) burst(ctx context.Context, n int) {
	for range n {
		d.step(ctx)
	}
}

func (d *driver) step(ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := d.rng.IntN(len(d.names))
	name := d.names[i]
	svcs := d.client.CoreV1().Services(d.ns)
	cur, err := svcs.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		d.create(ctx, i)
		return
	}
	if err != nil {
		d.fail("get service", err)
		return
	}
	switch r := d.rng.IntN(100); {
	case r < 50:
		d.writeSlices(ctx, cur)
	case r < 75:
		spec := d.spec(i, cur)
		cur.Spec = spec
		cur.Annotations = d.annotations()
		updated, err := svcs.Update(ctx, cur, metav1.UpdateOptions{})
		if d.done("update service", err) {
			d.setIngress(ctx, updated)
		}
	case r < 85:
		d.setIngress(ctx, cur)
	default:
		d.done("delete service", svcs.Delete(ctx, name, metav1.DeleteOptions{}))
		// Mostly the slices go with it; sometimes they linger, as they do
		// until the EndpointSlice controller catches up.
		if d.rng.IntN(5) > 0 {
			d.done("delete slices", d.client.DiscoveryV1().EndpointSlices(d.ns).DeleteCollection(ctx, metav1.DeleteOptions{},
				metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name}))
		}
	}
}

func (d *driver) create(ctx context.Context, i int) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: d.names[i], Namespace: d.ns, Annotations: d.annotations()},
		Spec:       d.spec(i, nil),
	}
	// Every 13th Service belongs to another proxy: hnsproxy must not program it.
	if i%13 == 12 {
		svc.Labels = map[string]string{serviceProxyNameLabel: "other-proxy"}
	}
	created, err := d.client.CoreV1().Services(d.ns).Create(ctx, svc, metav1.CreateOptions{})
	if !d.done("create service", err) {
		return
	}
	if ip := created.Spec.ClusterIP; ip != "" && !slices.Contains(d.clusterIPs, ip) {
		d.clusterIPs = append(d.clusterIPs, ip)
	}
	d.setIngress(ctx, created)
	d.writeSlices(ctx, created)
}

func (d *driver) annotations() map[string]string {
	if d.rng.IntN(10) == 0 {
		return map[string]string{desired.PreserveDestinationAnnotation: "true"}
	}
	return nil
}

// spec is a fresh random spec; an update keeps what the apiserver
// allocated and forbids changing (cluster IPs and families).
func (d *driver) spec(i int, old *corev1.Service) corev1.ServiceSpec {
	r := d.rng
	var s corev1.ServiceSpec
	if old != nil {
		s.ClusterIP, s.ClusterIPs = old.Spec.ClusterIP, old.Spec.ClusterIPs
		s.IPFamilies, s.IPFamilyPolicy = old.Spec.IPFamilies, old.Spec.IPFamilyPolicy
	} else if i%7 == 6 {
		s.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
	}
	kinds := []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeClusterIP}
	kind := r.IntN(len(kinds))
	s.Type = kinds[kind]
	for p := range 1 + r.IntN(3) {
		proto := corev1.ProtocolTCP
		if r.IntN(4) == 0 {
			proto = corev1.ProtocolUDP
		}
		s.Ports = append(s.Ports, corev1.ServicePort{
			Name:       fmt.Sprintf("p%d", p),
			Protocol:   proto,
			Port:       int32(80 + 10*p + r.IntN(3)),
			TargetPort: intstr.FromInt32(int32(8080 + r.IntN(3))),
		})
	}
	if r.IntN(5) == 0 {
		s.SessionAffinity = corev1.ServiceAffinityClientIP
	}
	if kind == 3 || r.IntN(5) == 0 {
		// Shared with other Services at times: conflicts are part of the soak.
		for range 1 + r.IntN(2) {
			s.ExternalIPs = append(s.ExternalIPs, fmt.Sprintf("198.51.100.%d", 1+r.IntN(16)))
		}
	}
	if r.IntN(6) == 0 {
		d.collide(&s)
	}
	if s.Type != corev1.ServiceTypeClusterIP && r.IntN(3) == 0 {
		s.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	}
	if r.IntN(7) == 0 {
		s.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
	}
	return s
}

// collide adds a tenant's hostile external IP to s: another Service's
// cluster IP (refused), the frontend of the planted foreign load balancer
// on its port (reported, never deleted), or a node address (served, as
// kube-proxy does).
func (d *driver) collide(s *corev1.ServiceSpec) {
	switch d.rng.IntN(3) {
	case 0:
		if len(d.clusterIPs) == 0 {
			return
		}
		s.ExternalIPs = append(s.ExternalIPs, d.clusterIPs[d.rng.IntN(len(d.clusterIPs))])
	case 1:
		s.ExternalIPs = append(s.ExternalIPs, foreignFrontend)
		s.Ports = append(s.Ports, corev1.ServicePort{
			Name: "foreign", Protocol: corev1.ProtocolTCP, Port: foreignPort, TargetPort: intstr.FromInt32(8080),
		})
	default:
		s.ExternalIPs = append(s.ExternalIPs, clusterSpec.Nodes[d.rng.IntN(len(clusterSpec.Nodes))].NodeIP)
	}
	d.collisions.Add(1)
}

// setIngress gives a LoadBalancer Service an ingress IP, as a cloud
// controller would (from a small pool, so Services collide at times).
func (d *driver) setIngress(ctx context.Context, svc *corev1.Service) {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: fmt.Sprintf("192.0.2.%d", 1+d.rng.IntN(12))}}
	_, err := d.client.CoreV1().Services(d.ns).UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	d.done("service status", err)
}

// writeSlices publishes one or two IPv4 slices over a random set of pods.
func (d *driver) writeSlices(ctx context.Context, svc *corev1.Service) {
	r := d.rng
	pool, least := d.slicePods(svc.Name)
	flipOdds := 10 // 1 in 10 endpoints each serving terminating, terminating, not ready
	if least > 0 {
		flipOdds = 40 // mostly ready, so a big Service's backends cross the cap
	}
	n := least + r.IntN(len(pool)-least+1)
	pick := r.Perm(len(pool))[:n]
	two := r.IntN(3) == 0
	want := map[string]*discoveryv1.EndpointSlice{}
	for _, suffix := range []string{"a", "b"} {
		if suffix == "b" && !two {
			continue
		}
		s := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{
				Name: svc.Name + "-" + suffix, Namespace: d.ns,
				Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: "soak"},
			},
			AddressType: discoveryv1.AddressTypeIPv4,
		}
		for k, v := range svc.Labels {
			s.Labels[k] = v
		}
		for _, p := range svc.Spec.Ports {
			port := p.TargetPort.IntVal
			if suffix == "b" && r.IntN(10) == 0 {
				port++ // mixed target ports across slices
			}
			s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Protocol: ptr.To(p.Protocol), Port: ptr.To(port)})
		}
		want[s.Name] = s
	}
	for j, idx := range pick {
		p := pool[idx]
		name := svc.Name + "-a"
		if two && j%2 == 1 {
			name = svc.Name + "-b"
		}
		ready, serving, terminating := true, true, false
		switch c := r.IntN(flipOdds); {
		case c == 0: // serving while terminating
			ready, terminating = false, true
		case c == 1: // terminating, no longer serving
			ready, serving, terminating = false, false, true
		case c == 2: // not ready yet
			ready, serving = false, false
		}
		want[name].Endpoints = append(want[name].Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{p.IP.String()},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
			NodeName:   ptr.To(p.Node),
		})
	}
	api := d.client.DiscoveryV1().EndpointSlices(d.ns)
	for _, suffix := range []string{"a", "b"} {
		name := svc.Name + "-" + suffix
		s, wanted := want[name]
		cur, err := api.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) && wanted:
			_, err = api.Create(ctx, s, metav1.CreateOptions{})
			d.done("create slice", err)
		case apierrors.IsNotFound(err):
		case err != nil:
			d.fail("get slice", err)
		case wanted:
			cur.Labels, cur.Ports, cur.Endpoints = s.Labels, s.Ports, s.Endpoints
			_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
			d.done("update slice", err)
		default:
			d.done("delete slice", api.Delete(ctx, name, metav1.DeleteOptions{}))
		}
	}
}

// done counts a write and reports whether it succeeded.
func (d *driver) done(what string, err error) bool {
	if err != nil {
		d.fail(what, err)
		return false
	}
	d.changes.Add(1)
	return true
}

func (d *driver) fail(what string, err error) {
	d.failures.Add(1)
	// Outages (apiserver restarts) and races with itself are expected; a
	// refusal of an object would be a driver bug, so the first are shown.
	var status apierrors.APIStatus
	if d.logged < logFailures && errors.As(err, &status) && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		d.logged++
		fmt.Fprintf(os.Stderr, "soak: driver: %s: %v\n", what, err)
	}
}
