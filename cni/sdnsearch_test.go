package cni_test

import (
	"context"
	"testing"
)

// TestSDNSearchDomainTakesThePodsNamespaceFromCNIArgs: for an sdn*
// configuration the endpoint's and the result's first search domain is
// prefixed with the pod's namespace, which the runtime passes in CNI_ARGS
// as K8S_POD_NAMESPACE beside the pod's name (K8S_POD_NAME), as containerd
// does (with IgnoreUnknown, which host-local requires).
func TestSDNSearchDomainTakesThePodsNamespaceFromCNIArgs(t *testing.T) {
	n1, conf := l2bridgeNode(t, 67)
	conf.extra = map[string]any{"optionalFlags": map[string]any{"localRoutedPortMapping": true}} // an sdn* field
	rt := newRuntime(t, conf)
	p := pod{id: "web", netns: n1.createNamespace(t)}
	rc := p.rt()
	rc.Args = [][2]string{{"IgnoreUnknown", "1"}, {"K8S_POD_NAMESPACE", "shop"}, {"K8S_POD_NAME", "web-0"}}
	if _, err := rt.cni.AddNetworkList(context.Background(), rt.list, rc); err != nil {
		t.Fatal(err)
	}
	e := endpointByName(n1.dump(t), p.endpointName("cbr0"))
	if e == nil {
		t.Fatalf("no endpoint %s", p.endpointName("cbr0"))
	}
	if len(e.Dns.Search) == 0 || e.Dns.Search[0] != "shop.svc.cluster.local" {
		t.Errorf("endpoint search domains %v, want shop.svc.cluster.local first", e.Dns.Search)
	}
}
