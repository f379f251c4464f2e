//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// What sig-windows-tools' HostProcess start scripts run kube-proxy with,
// as the process receives it (PowerShell has expanded
// $env:CONTAINER_SANDBOX_MOUNT_POINT). Calico: hostprocess/calico/kube-proxy/
// start.ps1 at 401ee6fcd8369cd8c293bd361275fdbe6f24ed07 on an l2bridge
// network (no --source-vip), KUBE_NETWORK=Calico; it first copies kubeadm's
// kubeconfig.conf to kubeconfig-win.conf with "/var" replaced by the sandbox
// path. Flannel: hostprocess/flannel/kube-proxy/start.ps1 at 03f99247553f
// (before #385 removed it), KUBE_NETWORK=flannel.4096, the source VIP from
// host-local, the ConfigMap mounted at /mounts/var/lib/kube-proxy.
func calicoArgs(node, sandbox string) []string {
	return []string{"--hostname-override=" + node, "--v=4", "--proxy-mode=kernelspace",
		"--kubeconfig=" + sandbox + "/var/lib/kube-proxy/kubeconfig-win.conf", "--enable-dsr=true", "--feature-gates=WinDSR=true"}
}

func flannelArgs(node, sandbox, sourceVIP string) []string {
	return []string{"--v=6", "--hostname-override=" + node, "--feature-gates=WinOverlay=true", "--proxy-mode=kernelspace",
		"--source-vip=" + sourceVIP, "--kubeconfig=" + sandbox + "/mounts/var/lib/kube-proxy/kubeconfig-win.conf"}
}

// rigArgs are the only flags the tests add to a manifest's: listen on free
// loopback ports (the defaults, 0.0.0.0:10256 and 127.0.0.1:10249, would
// leave loopback and collide between nodes) and keep each node's state file
// in its own directory. HNS is the node's hnssim, through HNS_ENDPOINT.
func rigArgs(rig framework.ProxyRig) []string {
	return []string{"--healthz-bind-address=" + rig.HealthzAddr, "--metrics-bind-address=" + rig.MetricsAddr, "--state-file=" + rig.StateFile}
}

// sandbox lays out what a HostProcess container of the node would see
// below CONTAINER_SANDBOX_MOUNT_POINT: kubeadm's kube-proxy ConfigMap
// (its server set to this control plane) on a volume at mount, and the pod's
// ServiceAccount token and CA (deploy/'s ServiceAccount's).
func sandbox(rig framework.ProxyRig, mount string) (dir string, cm *corev1.ConfigMap, err error) {
	dir = filepath.Join(rig.Dir, "sandbox")
	cm = &corev1.ConfigMap{}
	raw, err := os.ReadFile(kubeadmConfigMapFixture)
	if err == nil {
		err = yaml.UnmarshalStrict(raw, cm)
	}
	if err != nil {
		return "", nil, err
	}
	identity, err := clientcmd.LoadFromFile(rig.Kubeconfig)
	if err != nil {
		return "", nil, err
	}
	ctx := identity.Contexts[identity.CurrentContext]
	cluster, user := identity.Clusters[ctx.Cluster], identity.AuthInfos[ctx.AuthInfo]
	cm.Data["kubeconfig.conf"] = strings.Replace(cm.Data["kubeconfig.conf"], "https://control-plane.example:6443", cluster.Server, 1)
	files := map[string][]byte{
		"var/run/secrets/kubernetes.io/serviceaccount/ca.crt": cluster.CertificateAuthorityData,
		"var/run/secrets/kubernetes.io/serviceaccount/token":  []byte(user.Token),
	}
	for name, content := range cm.Data {
		files[filepath.Join(mount, name)] = []byte(content)
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", nil, err
		}
		if err := os.WriteFile(path, content, 0o600); err != nil {
			return "", nil, err
		}
	}
	return dir, cm, nil
}

// startScriptKubeconfig does what both start scripts do before starting
// kube-proxy: kubeconfig-win.conf is kubeadm's kubeconfig.conf with "/var"
// replaced by the sandbox's "/var".
func startScriptKubeconfig(sandboxDir, mount string, cm *corev1.ConfigMap) error {
	win := strings.ReplaceAll(cm.Data["kubeconfig.conf"], "/var", sandboxDir+"/var")
	return os.WriteFile(filepath.Join(sandboxDir, mount, "kubeconfig-win.conf"), []byte(win), 0o600)
}

func sandboxEnv(rig framework.ProxyRig, dir, network string) []string {
	return []string{"HNS_ENDPOINT=" + rig.HNSEndpoint, "CONTAINER_SANDBOX_MOUNT_POINT=" + dir, "KUBE_NETWORK=" + network}
}

// overlayLaunch is deploy/replace-kube-proxy's hnsproxy container as
// kustomize builds it: its exact arguments and environment over kubeadm's
// ConfigMap as kubeadm wrote it, but for the listen addresses (which with
// --config come from the file, so the test sets them there) and the state file.
func overlayLaunch(t *testing.T) func(rig framework.ProxyRig) ([]string, []string, error) {
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), "../deploy/replace-kube-proxy")
	if err != nil {
		t.Fatal(err)
	}
	var ds appsv1.DaemonSet
	for _, r := range res.Resources() {
		if r.GetKind() == "DaemonSet" {
			raw, err := r.AsYAML()
			if err == nil {
				err = yaml.UnmarshalStrict(raw, &ds)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	c := ds.Spec.Template.Spec.Containers[0]
	return func(rig framework.ProxyRig) ([]string, []string, error) {
		dir, cm, err := sandbox(rig, c.VolumeMounts[0].MountPath)
		if err != nil {
			return nil, nil, err
		}
		conf := strings.NewReplacer(`healthzBindAddress: ""`, "healthzBindAddress: "+rig.HealthzAddr,
			`metricsBindAddress: ""`, "metricsBindAddress: "+rig.MetricsAddr).Replace(cm.Data["config.conf"])
		if err := os.WriteFile(filepath.Join(dir, c.VolumeMounts[0].MountPath, "config.conf"), []byte(conf), 0o600); err != nil {
			return nil, nil, err
		}
		var args, env []string
		for _, a := range c.Args {
			args = append(args, strings.ReplaceAll(a, "$(NODE_NAME)", rig.Node.Name))
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				env = append(env, e.Name+"="+e.Value)
			}
		}
		return append(args, "--state-file="+rig.StateFile), append(env, "HNS_ENDPOINT="+rig.HNSEndpoint, "CONTAINER_SANDBOX_MOUNT_POINT="+dir), nil
	}
}

// noOSBugProfile is a simulator profile whose Windows build has no known
// dataplane bug hnsproxy works around.
const noOSBugProfile = "ws2025"

// TestKubeProxyManifestsProgramHNS runs hnsproxy as kube-proxy's manifests
// run kube-proxy: one node with the exact arguments of sig-windows-tools'
// Calico start script, one with deploy/replace-kube-proxy's over kubeadm's
// ConfigMap as it is (both on Calico's l2bridge network), and an overlay
// cluster with Flannel's. Each programs the Service: the ClusterIP with
// every backend, DSR where the manifest asks for it, and on overlay the
// NodePort SNATed to the node's source VIP.
//
// The nodes play a build with no known OS bug (noOSBugProfile), so what
// shows is the manifests' own settings, not hnsproxy's workarounds on an
// affected Windows Server 2022 build (those are TestOSBug*'s).
func TestKubeProxyManifestsProgramHNS(t *testing.T) {
	kubeadm := overlayLaunch(t)
	calicoSpec := framework.ClusterSpec{
		NetworkType: framework.NetworkL2Bridge, NetworkName: "Calico",
		Nodes: []framework.NodeSpec{
			{Name: "win-calico", Profile: noOSBugProfile, NodeIP: "10.0.0.41", PodCIDR: "10.244.41.0/24"},
			{Name: "win-kubeadm", Profile: noOSBugProfile, NodeIP: "10.0.0.42", PodCIDR: "10.244.42.0/24"},
		},
		ProxyLaunch: func(rig framework.ProxyRig) ([]string, []string, error) {
			if rig.Node.Name == "win-kubeadm" {
				return kubeadm(rig)
			}
			dir, cm, err := sandbox(rig, "var/lib/kube-proxy")
			if err == nil {
				err = startScriptKubeconfig(dir, "var/lib/kube-proxy", cm)
			}
			return append(calicoArgs(rig.Node.Name, dir), rigArgs(rig)...), sandboxEnv(rig, dir, "Calico"), err
		},
	}
	flannelSpec := framework.ClusterSpec{
		NetworkType: framework.NetworkOverlay, NetworkName: "flannel.4096",
		Nodes: []framework.NodeSpec{
			{Name: "win-f1", Profile: noOSBugProfile, NodeIP: "10.0.0.43", PodCIDR: "10.244.43.0/24"},
			{Name: "win-f2", Profile: noOSBugProfile, NodeIP: "10.0.0.44", PodCIDR: "10.244.44.0/24"},
		},
		ProxyLaunch: func(rig framework.ProxyRig) ([]string, []string, error) {
			dir, cm, err := sandbox(rig, "mounts/var/lib/kube-proxy")
			if err == nil {
				err = startScriptKubeconfig(dir, "mounts/var/lib/kube-proxy", cm)
			}
			vip := nthIP(rig.Node.PodCIDR, 2) // what host-local reserved for the script
			return append(flannelArgs(rig.Node.Name, dir, vip), rigArgs(rig)...), sandboxEnv(rig, dir, "flannel.4096"), err
		},
	}
	for _, tc := range []struct {
		name string
		spec framework.ClusterSpec
		// want is a flag each node's ClusterIP or NodePort load balancer must have or lack.
		want func(n *framework.Node, role string, flags []string) error
	}{
		{"calico-and-kubeadm", calicoSpec, func(n *framework.Node, role string, flags []string) error {
			if role == "ClusterIP" && slices.Contains(flags, "DSR") != (n.Name() == "win-calico") {
				return fmt.Errorf("DSR %v: Calico's script asks for DSR, kubeadm's config.conf does not", flags)
			}
			return nil
		}},
		{"flannel", flannelSpec, func(n *framework.Node, role string, flags []string) error {
			if snat := "SNAT-to-" + nthIP(n.Spec.PodCIDR, 2); role == "NodePort" && !slices.Contains(flags, snat) {
				return fmt.Errorf("flags %v: want %s, the --source-vip Flannel's script passes", flags, snat)
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := framework.StartClusterForTest(t, tc.spec)
			web := append(wire(t, c.Nodes[0], "web", 1), wire(t, c.Nodes[1], "web", 1)...)
			svc := apply(t, c, service("web", "web", corev1.ServiceTypeNodePort, 80, 8080), framework.Backends(web))
			for _, n := range c.Nodes {
				all := backends(local(onNode(web, n.Name())...), remote(notOnNode(web, n.Name())...))
				err := framework.Poll(context.Background(), framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
					views, err := serviceViews(ctx, c, n, svc)
					if err != nil {
						return err
					}
					roles := map[string]bool{}
					for _, v := range views {
						// role frontend [flags] backends
						fields := strings.Fields(v)
						role, flagList := fields[0], strings.Split(strings.Trim(fields[2], "[]"), ",")
						roles[role] = true
						got := strings.Split(fields[len(fields)-1], ",")
						slices.Sort(got)
						if want := slices.Sorted(slices.Values(all)); !slices.Equal(got, want) {
							return fmt.Errorf("%s backends %v, want %v", role, got, want)
						}
						if err := tc.want(n, role, flagList); err != nil {
							return fmt.Errorf("%s: %w", role, err)
						}
					}
					if !roles["ClusterIP"] || !roles["NodePort"] {
						return fmt.Errorf("load balancers %v: want a ClusterIP and a NodePort one", views)
					}
					return nil
				})
				if err != nil {
					t.Errorf("node %s (log %s): %v", n.Name(), n.Proxy.LogPath(), err)
				}
			}
		})
	}
}

// TestAllowServiceExternalIPsFalse: a node whose hnsproxy runs with
// --feature-gates=AllowServiceExternalIPs=false programs no load balancer
// for a Service's spec.externalIPs, only its cluster IP; the other node,
// without the gate, programs both (so the check can fail).
func TestAllowServiceExternalIPsFalse(t *testing.T) {
	spec := l2bridgeSpec
	gated := spec.Nodes[0].Name
	spec.ProxyLaunch = func(rig framework.ProxyRig) ([]string, []string, error) {
		if rig.Node.Name == gated {
			return append(rig.Args, "--feature-gates=AllowServiceExternalIPs=false"), nil, nil
		}
		return rig.Args, nil, nil
	}
	c := framework.StartClusterForTest(t, spec)
	web := append(wire(t, c.Nodes[0], "web", 1), wire(t, c.Nodes[1], "web", 1)...)
	svc := service("web", "web", "", 80, 8080)
	svc.Spec.ExternalIPs = []string{"203.0.113.20"}
	svc = apply(t, c, svc, framework.Backends(web))
	for _, n := range c.Nodes {
		want := []string{"ClusterIP"}
		if n.Name() != gated {
			want = append(want, "ExternalIP")
		}
		err := framework.Poll(context.Background(), framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
			views, err := serviceViews(ctx, c, n, svc)
			if err != nil {
				return err
			}
			var roles []string
			for _, v := range views {
				roles = append(roles, strings.Fields(v)[0])
			}
			slices.Sort(roles)
			if !slices.Equal(roles, want) {
				return fmt.Errorf("load balancers %v, want roles %v", views, want)
			}
			return nil
		})
		if err != nil {
			t.Errorf("node %s: %v", n.Name(), err)
		}
	}
}
