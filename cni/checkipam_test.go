package cni_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCheckFailsWhenIPAMNoLongerHoldsThePodsAddress: CHECK hands on to the
// IPAM plugin's CHECK once HNS agrees with prevResult. A pod whose address
// host-local no longer holds (its store wiped or edited) fails CHECK, so
// the runtime learns of it before host-local hands the address to another
// pod.
func TestCheckFailsWhenIPAMNoLongerHoldsThePodsAddress(t *testing.T) {
	n1, conf := l2bridgeNode(t, 71)
	rt := newRuntime(t, conf)
	web := pod{id: "web", netns: n1.createNamespace(t)}
	res := rt.add(t, web)
	if err := rt.check(web); err != nil {
		t.Fatalf("CHECK of a pod as ADD left it: %v", err)
	}
	if err := os.Remove(filepath.Join(conf.dataDir, "pods", res.IPs[0].Address.IP.String())); err != nil {
		t.Fatal(err)
	}
	if err := rt.check(web); err == nil {
		t.Errorf("CHECK passed with host-local no longer holding %s", res.IPs[0].Address.IP)
	}
}
