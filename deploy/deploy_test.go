// Package deploy holds hnsproxy's Kubernetes manifests; this test proves
// they decode as the objects they claim to be and say what they must.
package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

// releaseTag is how hnsproxy's releases (and their images) are tagged.
var releaseTag = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// decodeAll decodes every document of every manifest in base/ strictly with
// client-go's scheme, and returns them with the image tag base/kustomization.yaml pins.
func decodeAll(t *testing.T) (map[string]runtime.Object, string) {
	t.Helper()
	var kust struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Namespace  string   `json:"namespace"`
		Resources  []string `json:"resources"`
		Images     []struct {
			Name   string `json:"name"`
			NewTag string `json:"newTag"`
		} `json:"images"`
	}
	data, err := os.ReadFile("base/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, &kust); err != nil {
		t.Fatalf("base/kustomization.yaml: %v", err)
	}
	if kust.Kind != "Kustomization" || kust.Namespace != "kube-system" {
		t.Errorf("kustomization.yaml: kind %q namespace %q", kust.Kind, kust.Namespace)
	}
	// Images are tagged by version: a rollout names the release, and a
	// rollback can name the one before.
	if len(kust.Images) != 1 || !releaseTag.MatchString(kust.Images[0].NewTag) {
		t.Errorf("kustomization.yaml images %+v: want the hnsproxy image pinned to a release vMAJOR.MINOR.PATCH", kust.Images)
	}
	files, _ := filepath.Glob("base/*.yaml")
	var listed []string
	for _, f := range files {
		if f = filepath.Base(f); f != "kustomization.yaml" {
			listed = append(listed, f)
		}
	}
	sort.Strings(listed)
	resources := append([]string(nil), kust.Resources...)
	sort.Strings(resources)
	if !reflect.DeepEqual(listed, resources) {
		t.Errorf("kustomization resources %v, manifests on disk %v", resources, listed)
	}

	objs := map[string]runtime.Object{}
	for _, f := range kust.Resources {
		data, err := os.ReadFile(filepath.Join("base", f))
		if err != nil {
			t.Fatal(err)
		}
		decodeInto(t, f, data, objs)
	}
	var tag string
	if len(kust.Images) > 0 {
		tag = kust.Images[0].NewTag
	}
	return objs, tag
}

// decodeInto decodes every document of a manifest strictly with client-go's
// scheme into objs, by kind.
func decodeInto(t *testing.T, name string, data []byte, objs map[string]runtime.Object) {
	t.Helper()
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, gvk, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if objs[gvk.Kind] != nil {
			t.Fatalf("%s: a second %s", name, gvk.Kind)
		}
		objs[gvk.Kind] = obj
	}
}

func TestManifests(t *testing.T) {
	objs, imageTag := decodeAll(t)
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "DaemonSet"} {
		if objs[kind] == nil {
			t.Fatalf("no %s in deploy/", kind)
		}
	}
	// `kubectl apply -k deploy/` creates exactly these.
	built := build(t, ".")
	for kind := range objs {
		if built[kind] == nil {
			t.Errorf("kustomize build deploy/ has no %s", kind)
		}
	}
	if len(built) != len(objs) {
		t.Errorf("kustomize build deploy/ makes %d kinds of objects, base/ has %d", len(built), len(objs))
	}
	sa := objs["ServiceAccount"].(*v1.ServiceAccount)
	ds := objs["DaemonSet"].(*appsv1.DaemonSet)
	pod := ds.Spec.Template.Spec
	if pod.NodeSelector["kubernetes.io/os"] != "windows" || !pod.HostNetwork || pod.ServiceAccountName != sa.Name {
		t.Errorf("pod spec: nodeSelector %v hostNetwork %v serviceAccount %q", pod.NodeSelector, pod.HostNetwork, pod.ServiceAccountName)
	}
	wo := pod.SecurityContext.WindowsOptions
	if wo == nil || wo.HostProcess == nil || !*wo.HostProcess || wo.RunAsUserName == nil || *wo.RunAsUserName != `NT AUTHORITY\system` {
		t.Errorf("windowsOptions = %+v: want a HostProcess container as NT AUTHORITY\\system", wo)
	}
	if ds.Spec.Selector.MatchLabels["k8s-app"] != ds.Spec.Template.Labels["k8s-app"] {
		t.Error("the DaemonSet selector does not match its pods")
	}

	if image := pod.Containers[0].Image; !strings.HasSuffix(image, ":"+imageTag) {
		t.Errorf("DaemonSet image %q is not tagged %q as kustomization.yaml pins it", image, imageTag)
	}

	binding := objs["ClusterRoleBinding"].(*rbacv1.ClusterRoleBinding)
	role := objs["ClusterRole"].(*rbacv1.ClusterRole)
	if binding.RoleRef.Name != role.Name || len(binding.Subjects) != 1 || binding.Subjects[0].Name != sa.Name || binding.Subjects[0].Namespace != sa.Namespace {
		t.Errorf("binding %+v does not bind role %q to %s/%s", binding, role.Name, sa.Namespace, sa.Name)
	}
	// Least privilege: exactly these grants, nothing more.
	want := map[string]bool{
		"/services/list": true, "/services/watch": true,
		"/nodes/get": true, "/nodes/list": true, "/nodes/watch": true,
		"discovery.k8s.io/endpointslices/list": true, "discovery.k8s.io/endpointslices/watch": true,
		"/events/create": true, "/events/patch": true, "events.k8s.io/events/create": true, "events.k8s.io/events/patch": true,
	}
	if got := grants(t, role.Rules); !reflect.DeepEqual(got, want) {
		t.Errorf("ClusterRole grants %v, want exactly %v", keys(got), keys(want))
	}

	// The DaemonSet's config file is the ConfigMap's, and it is a valid kernelspace configuration.
	cm := objs["ConfigMap"].(*v1.ConfigMap)
	if pod.Volumes[0].ConfigMap == nil || pod.Volumes[0].ConfigMap.Name != cm.Name {
		t.Errorf("the DaemonSet mounts %+v, not ConfigMap %q", pod.Volumes[0], cm.Name)
	}
	kp, warnings, err := options.DecodeConfig([]byte(cm.Data["config.conf"]))
	if err != nil || len(warnings) > 0 {
		t.Fatalf("config.conf: %v %q", err, warnings)
	}
	if kp.Mode != options.ProxyModeKernelspace || kp.Winkernel.NetworkName == "" {
		t.Errorf("config.conf: mode %q network %q", kp.Mode, kp.Winkernel.NetworkName)
	}
	args := strings.Join(pod.Containers[0].Args, " ")
	mount := pod.Containers[0].VolumeMounts[0].MountPath
	if !strings.Contains(args, "--config=") || !strings.Contains(filepath.ToSlash(strings.ReplaceAll(args, `\`, "/")), mount+"/config.conf") {
		t.Errorf("args %q do not read config.conf from the mount %q", args, mount)
	}
	if !strings.HasSuffix(strings.ReplaceAll(kp.ClientConnection.Kubeconfig, `\`, "/"), mount+"/kubeconfig.conf") {
		t.Errorf("config.conf's kubeconfig %q is not the mounted kubeconfig.conf", kp.ClientConnection.Kubeconfig)
	}
	if _, err := clientcmd.Load([]byte(cm.Data["kubeconfig.conf"])); err != nil {
		t.Errorf("kubeconfig.conf: %v", err)
	}
	checkHostProcessPaths(t, pod, kp.ClientConnection.Kubeconfig, cm.Data["kubeconfig.conf"])
}

// hostProcessLayouts are the values CONTAINER_SANDBOX_MOUNT_POINT takes:
// containerd 1.6 (hcsshim without the bind filter) mounts the image in a
// directory per container, containerd 1.7 and later bind it at C:\hpc. Both
// make each volume reachable below it at its mountPath (KEP-1981, "Container
// Mounts"; hcsshim internal/jobcontainers).
var hostProcessLayouts = map[string]string{
	"containerd 1.6":  `C:\C\5f0e6a1c2b3d\`,
	"containerd 1.7+": `C:\hpc\`,
}

// checkHostProcessPaths resolves every path the manifests name, for both
// layouts, as the runtime (command line) and hnsproxy (files) do, and
// checks each lands on its volume below the image directory: the config
// file on the ConfigMap's volume, the kubeconfig beside it, the
// ServiceAccount's CA and token on the token volume. A file exists only on
// a volume, so a path that reaches the host's own drive fails.
func checkHostProcessPaths(t *testing.T, pod v1.PodSpec, kubeconfigPath, kubeconfig string) {
	t.Helper()
	c := pod.Containers[0]
	const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	volumes := []string{saDir}
	var configMount string
	for _, m := range c.VolumeMounts {
		volumes = append(volumes, m.MountPath)
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				configMount = m.MountPath
				// kubelet never updates a ConfigMap mounted by subPath: an
				// edit would not reach the file hnsproxy watches.
				if m.SubPath != "" || m.SubPathExpr != "" {
					t.Errorf("the ConfigMap %s is mounted by subPath %q, which kubelet does not update", v.ConfigMap.Name, m.SubPath+m.SubPathExpr)
				}
			}
		}
	}
	var config string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			config = v
		}
	}
	kc, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	for layout, root := range hostProcessLayouts {
		getenv, base := sandboxEnv(root)
		onVolume := func(p string) bool {
			for _, v := range volumes {
				if strings.HasPrefix(slash(p), base+v+"/") {
					return true
				}
			}
			return false
		}
		want := map[string]string{
			"command":               base + "/hnsproxy.exe",
			"--config":              base + configMount + "/config.conf",
			"kubeconfig":            base + configMount + "/kubeconfig.conf",
			"certificate-authority": base + saDir + "/ca.crt",
			"tokenFile":             base + saDir + "/token",
		}
		resolved := kc.DeepCopy()
		if err := options.ExpandKubeconfigPaths(resolved, getenv, onVolume); err != nil {
			t.Fatalf("%s: %v", layout, err)
		}
		cluster, user := resolved.Clusters[resolved.Contexts[resolved.CurrentContext].Cluster], resolved.AuthInfos[resolved.Contexts[resolved.CurrentContext].AuthInfo]
		got := map[string]string{
			"certificate-authority": cluster.CertificateAuthority,
			"tokenFile":             user.TokenFile,
		}
		for name, p := range map[string]string{"command": c.Command[0], "--config": config, "kubeconfig": kubeconfigPath} {
			if got[name], err = options.ResolveInputPath(p, getenv, onVolume); err != nil {
				t.Errorf("%s: %s %q: %v", layout, name, p, err)
			}
		}
		for name := range want {
			if slash(got[name]) != want[name] {
				t.Errorf("%s: %s resolves to %q, want %q", layout, name, got[name], want[name])
			}
		}
	}
}

// slash writes a Windows path with forward slashes, for comparing.
func slash(p string) string { return strings.ReplaceAll(p, `\`, "/") }

// sandboxEnv is a HostProcess container's environment with
// CONTAINER_SANDBOX_MOUNT_POINT at root, and that directory (no trailing
// separator, forward slashes).
func sandboxEnv(root string) (getenv func(string) string, base string) {
	getenv = func(k string) string {
		if k == options.SandboxMountPointEnv {
			return root
		}
		return ""
	}
	return getenv, slash(strings.TrimSuffix(root, `\`))
}

// grants flattens RBAC rules to "group/resource/verb" entries; a rule
// naming resources or URLs is an error (hnsproxy's role has none).
func grants(t *testing.T, rules []rbacv1.PolicyRule) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	for _, r := range rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("unexpected rule %+v", r)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					got[g+"/"+res+"/"+v] = true
				}
			}
		}
	}
	return got
}

// nodeProxierRules are the rules of kube-proxy's bootstrap ClusterRole
// system:node-proxier in kubernetes v1.36.3
// (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go, with
// eventsRule from controller_policy.go; servicecidrs behind
// MultiCIDRServiceAllocator, on by default).
var nodeProxierRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"services", "endpoints"}, Verbs: []string{"list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "update", "patch"}},
	{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"servicecidrs"}, Verbs: []string{"list", "watch"}},
	{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
}

// hnsproxy is a drop-in for kube-proxy: "swap the image" keeps kube-proxy's
// ServiceAccount, bound to system:node-proxier. deploy/'s role is proven
// enough by the e2e suite (hnsproxy runs under it), so a role within
// node-proxier's also proves hnsproxy runs under kube-proxy's rights; a
// grant beyond them is one hnsproxy either needs (and would be refused
// after an image swap) or does not need (and should not hold). Informers
// list and watch; nothing gets a Service or an EndpointSlice by name.
func TestClusterRoleWithinNodeProxier(t *testing.T) {
	objs, _ := decodeAll(t)
	node := grants(t, nodeProxierRules)
	for g := range grants(t, objs["ClusterRole"].(*rbacv1.ClusterRole).Rules) {
		if !node[g] {
			t.Errorf("hnsproxy's ClusterRole grants %s, which kube-proxy's system:node-proxier does not", g)
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// config.conf is written for Flannel on Windows, whose backends name the
// HNS objects: host-gw makes the l2bridge network "cbr0" and the host's
// bridge endpoint after it, "cbr0_ep" (flannel-io/flannel,
// pkg/backend/hostgw/hostgw_windows.go: bridgeEndpointName := networkName +
// "_ep"); VXLAN makes the overlay network "flannel.<VNI>", "flannel.4096"
// by default (pkg/backend/vxlan/vxlan_windows.go). Health-check forwarding
// (forwardHealthCheckVip) looks the root endpoint up by name, as kube-proxy
// does (getEndpointByName(rootHnsEndpointName)), so a name Flannel never
// gives turns it off; the comment's overlay name must be Flannel's too.
func TestConfigMapNamesFlannelsHNSObjects(t *testing.T) {
	objs, _ := decodeAll(t)
	cm := objs["ConfigMap"].(*v1.ConfigMap)
	kp, _, err := options.DecodeConfig([]byte(cm.Data["config.conf"]))
	if err != nil {
		t.Fatal(err)
	}
	if kp.Winkernel.NetworkName != "cbr0" {
		t.Fatalf("networkName %q: this test knows Flannel host-gw's cbr0", kp.Winkernel.NetworkName)
	}
	if kp.Winkernel.ForwardHealthCheckVip && kp.Winkernel.RootHnsEndpointName != kp.Winkernel.NetworkName+"_ep" {
		t.Errorf("rootHnsEndpointName %q with forwardHealthCheckVip: Flannel host-gw's host endpoint on %q is %q, so health checks are never forwarded", kp.Winkernel.RootHnsEndpointName, kp.Winkernel.NetworkName, kp.Winkernel.NetworkName+"_ep")
	}
	overlay := regexp.MustCompile(`Overlay \(flannel vxlan\): networkName: (\S+?)\.?\s`).FindStringSubmatch(cm.Data["config.conf"])
	if overlay == nil || overlay[1] != "flannel.4096" {
		t.Errorf("config.conf's comment names the Flannel VXLAN network %v; Flannel names it flannel.4096 (flannel.<VNI>)", overlay)
	}
}
