package proxier

import (
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/klog/v2/ktesting"
)

// TestSliceWithoutServiceNameIsLogged: a hand-made EndpointSlice without the
// kubernetes.io/service-name label (the usual mistake with a Service
// without selector) is used by no Service; kube-proxy logs it as an error,
// so the operator learns why the Service has no endpoints.
func TestSliceWithoutServiceNameIsLogged(t *testing.T) {
	p := idleProxier(t, Options{})
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	p.handlerLog = logger
	logged := func() string { return logger.GetSink().(ktesting.Underlier).GetBuffer().String() }

	s := slice("web", endpoint{"10.244.2.7", "win-2"})
	s.Name, s.ResourceVersion = "hand-made", "10"
	delete(s.Labels, discoveryv1.LabelServiceName)
	unlabelled := cacheSlice(s)
	p.onSlice(unlabelled)
	if got := logged(); !strings.Contains(got, "default/hand-made") || !strings.Contains(got, discoveryv1.LabelServiceName) {
		t.Fatalf("an EndpointSlice without %s was not logged; log:\n%s", discoveryv1.LabelServiceName, got)
	}
	if got := p.tracker.take(); len(got.services) != 0 {
		t.Errorf("the unlabelled slice was tracked as a change of %v", got.services)
	}

	// A resync of the same version is no change and logs nothing more.
	before := strings.Count(logged(), "default/hand-made")
	p.onSliceUpdate(unlabelled, unlabelled)
	if after := strings.Count(logged(), "default/hand-made"); after != before {
		t.Errorf("a resync logged the unlabelled slice again (%d lines, was %d)", after, before)
	}

	// A labelled slice logs nothing.
	p.onSlice(cacheSlice(slice("api", endpoint{"10.244.2.8", "win-2"})))
	if strings.Contains(logged(), "default/api-abc") {
		t.Errorf("a labelled slice was logged:\n%s", logged())
	}
}
