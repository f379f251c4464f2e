package deploy

import (
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// `kubectl apply -k deploy/` creates a DaemonSet on every Windows node at
// once (a new DaemonSet is not rolled) and keeps no kube-proxy off any
// node, so on a cluster still running kube-proxy-windows both proxies run
// on every node: kube-proxy deletes every HNS load balancer, hnsproxy's
// too, whenever it restarts. Where the operator's guide offers it as a way
// of switching, the step must say it runs beside kube-proxy.
func TestOperatorsGuideSwitchStepSaysDeployRunsBesideKubeProxy(t *testing.T) {
	ds := build(t, ".")["DaemonSet"].(*appsv1.DaemonSet)
	if sel := ds.Spec.Template.Spec.NodeSelector; len(sel) != 1 || sel["kubernetes.io/os"] != "windows" {
		t.Fatalf("deploy/'s DaemonSet selects %v: this test knows it on every Windows node", sel)
	}
	section := doctest.Section(t, "docs/operators.md", "## Switching a cluster from kube-proxy")
	steps := regexp.MustCompile(`(?m)^\d+\. `).Split(section, -1)
	found := false
	for _, step := range steps {
		if !strings.Contains(step, "kubectl apply -k deploy/`") {
			continue
		}
		found = true
		if !strings.Contains(step, "beside") {
			t.Errorf("the switching step offering `kubectl apply -k deploy/` does not say it runs beside kube-proxy (remove kube-proxy's Windows DaemonSet first, or use deploy/replace-kube-proxy):\n%s", step)
		}
	}
	if !found {
		t.Fatal("the switching section no longer offers `kubectl apply -k deploy/`: revisit this test")
	}
}
