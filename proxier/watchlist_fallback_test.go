package proxier

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// client-go 0.37 streams informers' initial lists (WatchListClient, on by
// default) when the client can. An apiserver without streaming lists (the
// WatchList gate off, or one from before 1.27) refuses the watch with
// sendInitialEvents as invalid; the informers must then list as before,
// not stall unsynced. The fake clientset never streams and the e2e
// apiserver always can, so only this test takes the fallback.
func TestInformersListWhenTheAPIServerCannotStream(t *testing.T) {
	var streamAsked, listed atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/discovery.k8s.io/v1/endpointslices" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case q.Get("watch") == "true" && q.Has("sendInitialEvents"):
			streamAsked.Store(true)
			w.WriteHeader(http.StatusUnprocessableEntity)
			_ = json.NewEncoder(w).Encode(metav1.Status{
				TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status:   metav1.StatusFailure, Reason: metav1.StatusReasonInvalid, Code: http.StatusUnprocessableEntity,
				Message: "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
			})
		case q.Get("watch") == "true":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			listed.Store(true)
			_ = json.NewEncoder(w).Encode(discoveryv1.EndpointSliceList{
				TypeMeta: metav1.TypeMeta{Kind: "EndpointSliceList", APIVersion: "discovery.k8s.io/v1"},
				ListMeta: metav1.ListMeta{ResourceVersion: "5"},
				Items: []discoveryv1.EndpointSlice{{
					ObjectMeta:  metav1.ObjectMeta{Name: "web-a", Namespace: "default", ResourceVersion: "5"},
					AddressType: discoveryv1.AddressTypeIPv4,
				}},
			})
		}
	}))
	defer srv.Close()
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	if err != nil {
		t.Fatal(err)
	}
	lw := listWatch(kube, nil,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return kube.DiscoveryV1().EndpointSlices(metav1.NamespaceAll).List(ctx, o)
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return kube.DiscoveryV1().EndpointSlices(metav1.NamespaceAll).Watch(ctx, o)
		})
	store, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw, ObjectType: &discoveryv1.EndpointSlice{}, Handler: cache.ResourceEventHandlerFuncs{},
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go informer.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("informer never synced")
	}
	if !streamAsked.Load() {
		t.Error("the informer never asked to stream its list: this test no longer takes the fallback")
	}
	if !listed.Load() {
		t.Error("the informer synced without listing")
	}
	if _, ok, _ := store.GetByKey("default/web-a"); !ok {
		t.Errorf("the listed slice is not in the cache: %v", store.ListKeys())
	}
}
