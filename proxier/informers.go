package proxier

import (
	"context"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// The proxier's Service and EndpointSlice informers are its own, not a
// shared factory's: a shared informer passes each event through two
// listener goroutines before the handler, and every hand-over between
// goroutines wakes the idle processor. Their handlers run on the informer's
// own goroutine, which cut a 10,000-Service cold start's CPU by about a
// twentieth (docs/benchmarks-history.md, session 13). Nothing else in the daemon reads
// these caches.

// ownInformers are the proxier's Service and EndpointSlice informers.
type ownInformers struct {
	services, slices cache.Controller
}

// newOwnInformers builds the informers on opts.Kube; their handlers are p's.
func (p *Proxier) newOwnInformers(opts *Options) ownInformers {
	transform := TrimForCache
	if opts.CacheTransform != nil {
		transform = opts.CacheTransform
	}
	kube := opts.Kube
	services := listWatch(kube, opts.NarrowServices,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return kube.CoreV1().Services(metav1.NamespaceAll).List(ctx, o)
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return kube.CoreV1().Services(metav1.NamespaceAll).Watch(ctx, o)
		})
	slices := listWatch(kube, opts.NarrowSlices,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return kube.DiscoveryV1().EndpointSlices(metav1.NamespaceAll).List(ctx, o)
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return kube.DiscoveryV1().EndpointSlices(metav1.NamespaceAll).Watch(ctx, o)
		})
	// The proxier reads Services by key and all at once, never by
	// namespace: no index to keep.
	svcStore, svcInformer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: services,
		ObjectType:    &v1.Service{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    p.onService,
			UpdateFunc: p.onServiceUpdate,
			DeleteFunc: p.onService,
		},
		ResyncPeriod: opts.ResyncPeriod,
		Indexers:     cache.Indexers{},
		Transform:    transform,
	})
	sliceStore, sliceInformer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: slices,
		ObjectType:    &discoveryv1.EndpointSlice{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    p.onSlice,
			UpdateFunc: p.onSliceUpdate,
			DeleteFunc: p.onSliceDelete,
		},
		ResyncPeriod: opts.ResyncPeriod,
		Indexers:     cache.Indexers{sliceServiceIdx: indexSliceByService},
		Transform:    transform,
	})
	p.services = corelisters.NewServiceLister(svcStore.(cache.Indexer))
	p.slices = sliceStore.(cache.Indexer)
	// An informer's HasSynced holds until its handler has seen every object
	// of the initial list (the FIFO counts an item only once processed), so
	// Run can drop those changes: its first computation covers them.
	p.servicesSynced, p.slicesSynced = svcInformer.HasSynced, sliceInformer.HasSynced
	return ownInformers{services: svcInformer, slices: sliceInformer}
}

// run runs both informers until ctx ends.
func (o ownInformers) run(ctx context.Context) {
	go o.services.RunWithContext(ctx)
	go o.slices.RunWithContext(ctx)
}

// listWatch lists and watches one resource as client-go's informer
// factories do, including telling the reflector whether the client can
// stream its lists (a fake clientset cannot).
func listWatch(kube kubernetes.Interface, narrow func(*metav1.ListOptions),
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) cache.ListerWatcher {
	if narrow == nil {
		narrow = func(*metav1.ListOptions) {}
	}
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			narrow(&o)
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			narrow(&o)
			return watchFn(ctx, o)
		},
	}, kube)
}
