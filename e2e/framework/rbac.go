//go:build linux

package framework

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// deployRBACFiles are the manifests of deploy/ that give hnsproxy its
// identity and rights, applied as an operator would.
var deployRBACFiles = []string{"deploy/base/serviceaccount.yaml", "deploy/base/rbac.yaml"}

// proxyTokenLifetime outlives any test or demo run.
const proxyTokenLifetime = 24 * 60 * 60

// ProxyIdentity is the ServiceAccount hnsproxy runs as (from deploy/).
type ProxyIdentity struct {
	Namespace, Name string
	// Kubeconfig holds a bound ServiceAccount token from the TokenRequest
	// API, as the kubelet would project into the pod.
	Kubeconfig string
}

// User is the identity's username as the apiserver sees it.
func (p ProxyIdentity) User() string {
	return "system:serviceaccount:" + p.Namespace + ":" + p.Name
}

// ApplyProxyRBAC applies deploy/base/serviceaccount.yaml and deploy/base/rbac.yaml and
// writes a kubeconfig for the ServiceAccount to dir.
func ApplyProxyRBAC(ctx context.Context, cp *ControlPlane, admin kubernetes.Interface, dir string) (*ProxyIdentity, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	var sa *corev1.ServiceAccount
	for _, file := range deployRBACFiles {
		objs, err := decodeManifests(filepath.Join(root, file))
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			created, err := createObject(ctx, admin, obj)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			if s, ok := created.(*corev1.ServiceAccount); ok {
				sa = s
			}
		}
	}
	if sa == nil {
		return nil, fmt.Errorf("%v holds no ServiceAccount", deployRBACFiles)
	}
	tok, err := admin.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](proxyTokenLifetime)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("token for %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	id := &ProxyIdentity{Namespace: sa.Namespace, Name: sa.Name, Kubeconfig: filepath.Join(dir, "hnsproxy.kubeconfig")}
	ca, err := os.ReadFile(filepath.Join(cp.Dir(), caCertFile))
	if err != nil {
		return nil, err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: cp.APIServerURL(), CertificateAuthorityData: ca}
	cfg.AuthInfos[id.User()] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: id.User()}
	cfg.CurrentContext = "e2e"
	if err := clientcmd.WriteToFile(*cfg, id.Kubeconfig); err != nil {
		return nil, err
	}
	return id, nil
}

// decodeManifests reads a multi-document YAML file into typed objects.
func decodeManifests(path string) ([]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var objs []any
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		objs = append(objs, obj)
	}
}

func createObject(ctx context.Context, c kubernetes.Interface, obj any) (any, error) {
	opts := metav1.CreateOptions{}
	switch o := obj.(type) {
	case *corev1.ServiceAccount:
		return c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, opts)
	case *rbacv1.ClusterRole:
		return c.RbacV1().ClusterRoles().Create(ctx, o, opts)
	case *rbacv1.ClusterRoleBinding:
		return c.RbacV1().ClusterRoleBindings().Create(ctx, o, opts)
	case *rbacv1.Role:
		return c.RbacV1().Roles(o.Namespace).Create(ctx, o, opts)
	case *rbacv1.RoleBinding:
		return c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, opts)
	}
	return nil, fmt.Errorf("unexpected object %T in the RBAC manifests", obj)
}
