package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options/optionstest"
)

// nodeProxyLabel moves a node from kube-proxy-windows to hnsproxy.
const nodeProxyLabel = "hnsproxy.io/node-proxy"

// build runs kustomize on a directory, as `kubectl apply -k` does, and
// decodes the result strictly.
func build(t *testing.T, dir string) map[string]runtime.Object {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]runtime.Object{}
	decodeInto(t, "kustomize build "+dir, out, objs)
	return objs
}

// buildOverlay is the migration overlay, built.
func buildOverlay(t *testing.T) map[string]runtime.Object { return build(t, "replace-kube-proxy") }

// kubeadmConfigMap is testdata's kube-system/kube-proxy as kubeadm writes it.
func kubeadmConfigMap(t *testing.T) *v1.ConfigMap {
	t.Helper()
	data, err := os.ReadFile("testdata/kubeadm-kube-proxy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]runtime.Object{}
	decodeInto(t, "kubeadm-kube-proxy.yaml", data, objs)
	return objs["ConfigMap"].(*v1.ConfigMap)
}

// The overlay runs hnsproxy on kubeadm's ConfigMap, mounted where kubeadm
// mounts it, with kubeadm's --config argument, only on labelled Windows
// nodes, and drops deploy/'s own ConfigMap; every path it names resolves
// to the right volume on containerd 1.6 and 1.7+.
func TestReplaceKubeProxyOverlay(t *testing.T) {
	objs := buildOverlay(t)
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet"} {
		if objs[kind] == nil {
			t.Fatalf("no %s in the overlay", kind)
		}
	}
	if objs["ConfigMap"] != nil {
		t.Errorf("the overlay keeps a ConfigMap %q; hnsproxy reads kubeadm's", objs["ConfigMap"].(*v1.ConfigMap).Name)
	}
	ds := objs["DaemonSet"].(*appsv1.DaemonSet)
	pod := ds.Spec.Template.Spec
	if pod.NodeSelector[nodeProxyLabel] != "hnsproxy" || pod.NodeSelector["kubernetes.io/os"] != "windows" {
		t.Errorf("nodeSelector %v: want Windows nodes labelled %s=hnsproxy", pod.NodeSelector, nodeProxyLabel)
	}
	if len(pod.Volumes) != 1 || pod.Volumes[0].ConfigMap == nil || pod.Volumes[0].ConfigMap.Name != "kube-proxy" {
		t.Fatalf("volumes %+v: want kubeadm's ConfigMap kube-proxy", pod.Volumes)
	}
	c := pod.Containers[0]
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/var/lib/kube-proxy" {
		t.Errorf("mounts %+v: want the ConfigMap where kubeadm mounts it", c.VolumeMounts)
	}
	if !slices.Contains(c.Args, "--config=/var/lib/kube-proxy/config.conf") || !slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--takeover=") }) {
		t.Errorf("args %q: want kubeadm's --config and a --takeover token", c.Args)
	}
	if !slices.ContainsFunc(c.Env, func(e v1.EnvVar) bool { return e.Name == "KUBE_NETWORK" && e.Value != "" }) {
		t.Errorf("env %+v: kubeadm's config names no network, so KUBE_NETWORK must", c.Env)
	}
	cm := kubeadmConfigMap(t)
	kp, warnings, err := options.DecodeConfig([]byte(cm.Data["config.conf"]))
	if err != nil || len(warnings) > 0 {
		t.Fatalf("kubeadm's config.conf: %v %q", err, warnings)
	}
	checkHostProcessPaths(t, pod, kp.ClientConnection.Kubeconfig, cm.Data["kubeconfig.conf"])
}

// The overlay's exact arguments and environment over kubeadm's ConfigMap,
// laid out as a HostProcess container sees its volumes, complete to a
// kernelspace configuration on KUBE_NETWORK's network whose files are the
// mounted ones: the daemon's own flag parsing, no edits to the ConfigMap.
func TestOverlayArgsReadKubeadmConfigMapAsIs(t *testing.T) {
	cfg, mount, err := completeOverlay(t, kubeadmConfigMap(t))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Source.Mode != options.ProxyModeKernelspace || cfg.NodeName != "win-1" || cfg.Winkernel.NetworkName != os.Getenv("KUBE_NETWORK") {
		t.Errorf("mode %q node %q network %q", cfg.Source.Mode, cfg.NodeName, cfg.Winkernel.NetworkName)
	}
	if want := filepath.Join(mount, "kubeconfig.conf"); cfg.Kubeconfig != want {
		t.Errorf("kubeconfig %q, want the mounted %q", cfg.Kubeconfig, want)
	}
	if cfg.Takeover == "" || len(cfg.ClusterCIDRs) != 1 || cfg.ClusterCIDRs[0] != "10.244.0.0/16" {
		t.Errorf("takeover %q cluster CIDRs %v", cfg.Takeover, cfg.ClusterCIDRs)
	}
}

// kubeadm's ConfigMap is shared with the Linux nodes' kube-proxy, so its
// mode is often a Linux one: kubeadm writes what its ClusterConfiguration's
// KubeProxyConfiguration sets (mode: ipvs, nftables, iptables; kubeadm's
// componentconfigs/kubeproxy.go keeps it). The overlay reads that ConfigMap
// as it is, so hnsproxy runs kernelspace over it, saying so, instead of
// refusing to start on every migrated node.
func TestOverlayRunsOverALinuxModeInKubeadmConfigMap(t *testing.T) {
	for _, mode := range []string{"iptables", "ipvs", "nftables"} {
		cm := kubeadmConfigMap(t)
		conf := cm.Data["config.conf"]
		if !strings.Contains(conf, "\nmode: \"\"\n") {
			t.Fatalf("testdata's config.conf has no empty mode to set")
		}
		cm.Data["config.conf"] = strings.Replace(conf, "\nmode: \"\"\n", "\nmode: "+mode+"\n", 1)
		cfg, _, err := completeOverlay(t, cm)
		if err != nil {
			t.Errorf("mode %s: the overlay over kubeadm's ConfigMap does not start: %v", mode, err)
			continue
		}
		if cfg.Source.Mode != options.ProxyModeKernelspace {
			t.Errorf("mode %s: hnsproxy runs mode %q", mode, cfg.Source.Mode)
		}
		if !slices.ContainsFunc(cfg.Warnings, func(w string) bool { return strings.Contains(w, `"`+mode+`"`) }) {
			t.Errorf("mode %s: no warning names the ignored mode: %q", mode, cfg.Warnings)
		}
	}
}

// completeOverlay completes the overlay's exact arguments and environment
// over cm, laid out as a HostProcess container sees its volumes, with the
// daemon's own flag parsing; it returns the configuration, its warnings in
// cfg.Warnings, and the mounted volume's directory.
func completeOverlay(t *testing.T, cm *v1.ConfigMap) (*overlayConfig, string, error) {
	t.Helper()
	ds := buildOverlay(t)["DaemonSet"].(*appsv1.DaemonSet)
	c := ds.Spec.Template.Spec.Containers[0]
	sandbox := t.TempDir()
	mount := filepath.Join(sandbox, filepath.FromSlash(c.VolumeMounts[0].MountPath))
	if err := os.MkdirAll(mount, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, content := range cm.Data {
		if err := os.WriteFile(filepath.Join(mount, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(options.SandboxMountPointEnv, sandbox)
	t.Setenv("NODE_NAME", "win-1")
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			t.Setenv(e.Name, e.Value)
		}
	}
	var args []string
	for _, a := range c.Args {
		args = append(args, strings.ReplaceAll(a, "$(NODE_NAME)", os.Getenv("NODE_NAME")))
	}
	cfg, warnings, err := optionstest.Complete(args...)
	if err != nil {
		return nil, mount, fmt.Errorf("%q over kubeadm's ConfigMap: %w (warnings %q)", args, err, warnings)
	}
	return &overlayConfig{Config: cfg, Warnings: warnings}, mount, nil
}

// overlayConfig is a completed configuration and its warnings.
type overlayConfig struct {
	*options.Config
	Warnings []string
}

// No node runs both proxies: with kube-proxy-windows patched, every node
// is selected by exactly one of the two DaemonSets (Windows nodes) or by
// neither (Linux nodes), whatever the label says.
func TestNoNodeRunsBothProxies(t *testing.T) {
	hnsproxy := buildOverlay(t)["DaemonSet"].(*appsv1.DaemonSet)
	original, err := os.ReadFile("testdata/sig-windows-tools-kube-proxy-windows.yaml")
	if err != nil {
		t.Fatal(err)
	}
	patch, err := os.ReadFile("replace-kube-proxy/kube-proxy-windows-patch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	originalJSON, err := yaml.YAMLToJSON(original)
	if err != nil {
		t.Fatal(err)
	}
	patchJSON, err := yaml.YAMLToJSON(patch)
	if err != nil {
		t.Fatal(err)
	}
	// kubectl patch --type strategic does this on the server.
	patchedJSON, err := strategicpatch.StrategicMergePatch(originalJSON, patchJSON, appsv1.DaemonSet{})
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]runtime.Object{}
	decodeInto(t, "patched kube-proxy-windows", patchedJSON, objs)
	kubeProxy := objs["DaemonSet"].(*appsv1.DaemonSet)

	for _, node := range []map[string]string{
		{"kubernetes.io/os": "windows"},
		{"kubernetes.io/os": "windows", nodeProxyLabel: "hnsproxy"},
		{"kubernetes.io/os": "windows", nodeProxyLabel: "kube-proxy"},
		{"kubernetes.io/os": "linux", nodeProxyLabel: "hnsproxy"},
		{"kubernetes.io/os": "linux"},
	} {
		onHNSProxy, onKubeProxy := selects(t, hnsproxy.Spec.Template.Spec, node), selects(t, kubeProxy.Spec.Template.Spec, node)
		windows := node["kubernetes.io/os"] == "windows"
		if onHNSProxy && onKubeProxy || windows && !onHNSProxy && !onKubeProxy || !windows && (onHNSProxy || onKubeProxy) {
			t.Errorf("node %v: hnsproxy %v, kube-proxy-windows %v", node, onHNSProxy, onKubeProxy)
		}
		if onHNSProxy != (windows && node[nodeProxyLabel] == "hnsproxy") {
			t.Errorf("node %v: hnsproxy %v, want it exactly on labelled Windows nodes", node, onHNSProxy)
		}
	}
}

// selects reports whether a DaemonSet pod with this spec is scheduled on a
// node with these labels: its nodeSelector and required node affinity (In,
// NotIn, Exists, DoesNotExist; terms ORed), as the scheduler reads them.
func selects(t *testing.T, pod v1.PodSpec, node map[string]string) bool {
	t.Helper()
	set := labels.Set(node)
	if !labels.SelectorFromSet(pod.NodeSelector).Matches(set) {
		return false
	}
	if pod.Affinity == nil || pod.Affinity.NodeAffinity == nil || pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	ops := map[v1.NodeSelectorOperator]selection.Operator{
		v1.NodeSelectorOpIn: selection.In, v1.NodeSelectorOpNotIn: selection.NotIn,
		v1.NodeSelectorOpExists: selection.Exists, v1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	}
	for _, term := range pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		sel := labels.NewSelector()
		for _, e := range term.MatchExpressions {
			op, ok := ops[e.Operator]
			if !ok {
				t.Fatalf("operator %q: the test does not read it", e.Operator)
			}
			r, err := labels.NewRequirement(e.Key, op, e.Values)
			if err != nil {
				t.Fatal(err)
			}
			sel = sel.Add(*r)
		}
		if sel.Matches(set) {
			return true
		}
	}
	return false
}
