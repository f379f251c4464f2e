package deploy

import (
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// The operator's guide runs hnsproxy-diag in the hnsproxy pod (kubectl
// exec) "with the flags deploy/base/daemonset.yaml gives hnsproxy". Its
// --config must reach the DaemonSet's config.conf on containerd 1.6 and
// 1.7+ alike, as hnsproxy-diag resolves it (options.ResolveInputPath, the
// daemon's own rule): a path hard-coded below C:\hpc exists only where
// containerd 1.7+ binds the image there.
func TestOperatorsGuideDiagFlagsReachTheConfigOnBothRuntimes(t *testing.T) {
	section := doctest.Section(t, "docs/operators.md", `### "Why does my Service not work on this node?": hnsproxy-diag`)
	m := regexp.MustCompile(`(?m)^FLAGS="([^"]*)"`).FindStringSubmatch(section)
	if m == nil {
		t.Fatal(`the hnsproxy-diag section sets no FLAGS="..." for kubectl exec`)
	}
	var config string
	for _, f := range strings.Fields(m[1]) {
		if v, ok := strings.CutPrefix(f, "--config="); ok {
			config = v
		}
	}
	if config == "" {
		t.Fatalf("FLAGS %q: no --config", m[1])
	}

	objs, _ := decodeAll(t)
	c := objs["DaemonSet"].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0]
	mount := c.VolumeMounts[0].MountPath
	for layout, root := range hostProcessLayouts {
		getenv, base := sandboxEnv(root)
		want := base + mount + "/config.conf"
		// Only the volume's file exists: on 1.6 nothing is bound at C:\hpc.
		exists := func(p string) bool { return slash(p) == want }
		got, err := options.ResolveInputPath(config, getenv, exists)
		if err != nil {
			t.Errorf("%s: --config=%s: %v", layout, config, err)
			continue
		}
		if slash(got) != want {
			t.Errorf("%s: the guide's hnsproxy-diag --config=%s reads %q; the DaemonSet's config.conf is at %q", layout, config, got, want)
		}
	}
}

// /debug/hns is served only on a loopback metrics address or with
// --enable-debug-endpoint (options.Config.DebugEndpoint). deploy/'s
// config.conf binds metrics beyond loopback for Prometheus, so wherever
// the guide sends an operator to /debug/hns on deploy/'s DaemonSet it must
// say to add that flag; the overlay over kubeadm's ConfigMap keeps the
// loopback default, where it is served.
func TestOperatorsGuideDebugHNSUnderTheManifests(t *testing.T) {
	objs, _ := decodeAll(t)
	var kp struct {
		MetricsBindAddress string `json:"metricsBindAddress"`
	}
	if err := yaml.Unmarshal([]byte(objs["ConfigMap"].(*v1.ConfigMap).Data["config.conf"]), &kp); err != nil {
		t.Fatal(err)
	}
	host, _, err := net.SplitHostPort(kp.MetricsBindAddress)
	if err != nil {
		t.Fatal(err)
	}
	args := objs["DaemonSet"].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Args
	if cfg, _, err := completeOverlay(t, kubeadmConfigMap(t)); err != nil || !cfg.DebugEndpoint {
		t.Errorf("the overlay over kubeadm's ConfigMap does not serve /debug/hns (%v)", err)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || slices.Contains(args, "--enable-debug-endpoint") {
		return // served by deploy/ as it is
	}
	guide, err := os.ReadFile("../docs/operators.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, heading := range []string{"### Manual test plan (both runtimes)", "**What is hnsproxy doing about it?**"} {
		_, section, ok := strings.Cut(string(guide), heading)
		if !ok {
			t.Fatalf("docs/operators.md has no %q", heading)
		}
		section, _, _ = strings.Cut(section, "\n\n**")
		section, _, _ = strings.Cut(section, "The migration overlay")
		if strings.Contains(section, "/debug/hns") && !strings.Contains(section, "--enable-debug-endpoint") {
			t.Errorf("docs/operators.md %q sends the operator to /debug/hns without --enable-debug-endpoint; deploy/ binds metrics to %s, where it is off", heading, kp.MetricsBindAddress)
		}
	}
}
