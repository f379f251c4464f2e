//go:build linux

package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// user is an identity the apiserver authenticates by a static bearer token
// (--token-auth-file), with a kubeconfig written for it.
type user struct {
	name       string
	groups     []string
	kubeconfig string // file name in the control plane directory
}

var (
	// adminUser is in system:masters, which RBAC's bootstrap policy binds to
	// cluster-admin.
	adminUser = user{name: "e2e-admin", groups: []string{"system:masters"}, kubeconfig: "admin.kubeconfig"}
	// kubeProxyUser is the identity kube-proxy runs as; the bootstrap
	// ClusterRoleBinding system:node-proxier grants it the system:node-proxier
	// ClusterRole, and nothing else. No groups, so no node permissions sneak in.
	kubeProxyUser = user{name: "system:kube-proxy", kubeconfig: "kube-proxy.kubeconfig"}

	users = []user{adminUser, kubeProxyUser}
)

// writeTokenFile gives each user a fresh token in the apiserver's static
// token file (token,user,uid,"group1,group2") and returns the tokens by user.
func writeTokenFile(dir string) (map[string]string, error) {
	tokens := map[string]string{}
	var b strings.Builder
	for _, u := range users {
		tok, err := randomToken()
		if err != nil {
			return nil, err
		}
		tokens[u.name] = tok
		// The groups column must be absent, not empty, for a user without
		// groups: the apiserver would read "" as a group named "".
		fmt.Fprintf(&b, "%s,%s,%s", tok, u.name, u.name)
		if len(u.groups) > 0 {
			fmt.Fprintf(&b, ",%q", strings.Join(u.groups, ","))
		}
		b.WriteString("\n")
	}
	return tokens, os.WriteFile(filepath.Join(dir, tokenFile), []byte(b.String()), 0o600)
}

// writeKubeconfigs writes one self-contained kubeconfig per user (CA data
// inline) pointing at server.
func writeKubeconfigs(dir, server string, tokens map[string]string) error {
	ca, err := os.ReadFile(filepath.Join(dir, caCertFile))
	if err != nil {
		return err
	}
	for _, u := range users {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
		cfg.AuthInfos[u.name] = &clientcmdapi.AuthInfo{Token: tokens[u.name]}
		cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: u.name}
		cfg.CurrentContext = "e2e"
		if err := clientcmd.WriteToFile(*cfg, filepath.Join(dir, u.kubeconfig)); err != nil {
			return fmt.Errorf("writing %s: %w", u.kubeconfig, err)
		}
	}
	return nil
}

// restConfig loads a user's kubeconfig from dir.
func restConfig(dir string, u user) (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", filepath.Join(dir, u.kubeconfig))
}
