//go:build linux && benche2e

package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// sliceWatch notes when the bench last saw each Service's EndpointSlices
// change, through its own informer: the moment the controller's part of a
// change is visible to a watcher, so a change's latency splits into the
// control plane's share and hnsproxy's.
type sliceWatch struct {
	mu   sync.Mutex
	seen map[string]time.Time // by Service name
	// writes counts the slice writes seen, by Service name: the mix
	// phase's unit (a slice created, updated or deleted).
	writes map[string]int
}

func watchSlices(ctx context.Context, admin kubernetes.Interface) (*sliceWatch, error) {
	w := &sliceWatch{seen: map[string]time.Time{}, writes: map[string]int{}}
	factory := informers.NewSharedInformerFactoryWithOptions(admin, 0, informers.WithNamespace(namespace))
	inf := factory.Discovery().V1().EndpointSlices().Informer()
	note := func(obj any) {
		if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
			name := s.Labels[discoveryv1.LabelServiceName]
			w.mu.Lock()
			w.seen[name] = time.Now()
			w.writes[name]++
			w.mu.Unlock()
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    note,
		UpdateFunc: func(_, obj any) { note(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			note(obj)
		},
	}); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("EndpointSlice informer did not sync")
	}
	return w, nil
}

// latest is the last time any of services' slices changed after since,
// and false when one of them has not changed since then.
func (w *sliceWatch) latest(services []string, since time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, s := range services {
		t := w.seen[s]
		if t.Before(since) {
			return time.Time{}, false
		}
		if t.After(last) {
			last = t
		}
	}
	return last, true
}

// written is how many slice writes of services the watch has seen.
func (w *sliceWatch) written(services []string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, s := range services {
		n += w.writes[s]
	}
	return n
}
