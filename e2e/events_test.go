//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestEventsReachARealAPIServer writes hnsproxy's events the way the daemon
// does (its broadcaster, its reporter, the deploy/ ServiceAccount and
// ClusterRole) to a real kube-apiserver, whose validation the fake
// clientset of the unit tests does not run:
//   - the server refuses a note over events.NoteLimit bytes, and takes one
//     of exactly that many;
//   - an HNS refusal with a long message still arrives, cut;
//   - an event raised again becomes a series, which the broadcaster
//     patches: the ClusterRole must grant patch on events.k8s.io events.
func TestEventsReachARealAPIServer(t *testing.T) {
	ctx := context.Background()
	cp := framework.StartForTest(t)
	admin := cp.AdminClient(t)
	id, err := framework.ApplyProxyRBAC(ctx, cp, admin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", id.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "shop"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("the server's note limit", func(t *testing.T) {
		for _, size := range []int{events.NoteLimit, events.NoteLimit + 1} {
			_, err := proxy.EventsV1().Events(ns).Create(ctx, &eventsv1.Event{
				ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("note-%d", size)},
				EventTime:           metav1.NowMicro(),
				ReportingController: events.ReportingController,
				ReportingInstance:   events.ReportingController + "-e2e",
				Action:              events.ActionSync,
				Reason:              "NoteLimit",
				Type:                corev1.EventTypeWarning,
				Regarding:           *events.ServiceRef(types.NamespacedName{Namespace: ns, Name: "web"}),
				Note:                strings.Repeat("x", size),
			}, metav1.CreateOptions{})
			if fits := size <= events.NoteLimit; fits != (err == nil) || (!fits && !apierrors.IsInvalid(err)) {
				t.Errorf("a note of %d bytes: %v, want it taken: %v (refused as invalid otherwise)", size, err, fits)
			}
		}
	})

	b := events.NewBroadcaster(proxy)
	bctx, stop := context.WithCancel(ctx)
	if err := b.StartRecordingToSinkWithContext(bctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(); b.Shutdown() })
	r := events.NewReporter(b, "win-1")

	t.Run("a long HNS message is cut, not lost", func(t *testing.T) {
		msg := strings.Repeat("Le paramètre est incorrect. ", 60)
		r.LoadBalancerRejected(types.NamespacedName{Namespace: ns, Name: "web"}, "http", "10.96.0.10:80/tcp",
			hnslb.NewError("CreateLoadBalancer", hnslb.CodeInvalidParameter, "%s", msg))
		ev := awaitEvent(t, admin, ns, events.ReasonLoadBalancerRejected, func(*eventsv1.Event) bool { return true })
		if !strings.HasPrefix(ev.Note, "node win-1: HNS rejected the load balancer for port http (10.96.0.10:80/tcp): hns CreateLoadBalancer: Le paramètre") {
			t.Errorf("note %q", ev.Note)
		}
	})

	t.Run("a repeated event is patched into a series", func(t *testing.T) {
		r.FeatureUnavailable("DSR", "needs HNS 10.2")
		awaitEvent(t, admin, metav1.NamespaceDefault, events.ReasonHNSFeatureUnavailable, func(*eventsv1.Event) bool { return true })
		r.FeatureUnavailable("DSR", "needs HNS 10.2")
		awaitEvent(t, admin, metav1.NamespaceDefault, events.ReasonHNSFeatureUnavailable, func(ev *eventsv1.Event) bool {
			return ev.Series != nil && ev.Series.Count >= 2
		})
	})
}

// awaitEvent waits for an event of reason in ns that done accepts.
func awaitEvent(t *testing.T, c kubernetes.Interface, ns, reason string, done func(*eventsv1.Event) bool) *eventsv1.Event {
	t.Helper()
	var found *eventsv1.Event
	err := framework.Poll(context.Background(), framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		list, err := c.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for i := range list.Items {
			if ev := &list.Items[i]; ev.Reason == reason && done(ev) {
				found = ev
				return nil
			}
		}
		return errors.New("no such event yet")
	})
	if err != nil {
		t.Fatalf("waiting for a %s event in %s: %v", reason, ns, err)
	}
	return found
}
