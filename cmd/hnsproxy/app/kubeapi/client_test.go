package kubeapi

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/text/encoding/unicode"
	"k8s.io/client-go/rest"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

// The kubeconfig's files are found below the sandbox mount point, and
// --master still applies over its server.
func TestKubeconfigInHostProcessContainer(t *testing.T) {
	root, err := filepath.Abs("testdata/hostprocess")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(root, "kubeconfig.conf")
	getenv := func(k string) string {
		if k == options.SandboxMountPointEnv {
			return root + "/"
		}
		return ""
	}
	rc, err := clientConfig(kubeconfig, "https://10.0.0.1:6443", getenv)
	if err != nil {
		t.Fatal(err)
	}
	if rc.TLSClientConfig.CAFile != root+"/ca.crt" || rc.BearerTokenFile != root+"/token" || rc.Host != "https://10.0.0.1:6443" {
		t.Errorf("CA %q token file %q host %q; want them below %s and --master's host", rc.TLSClientConfig.CAFile, rc.BearerTokenFile, rc.Host, root)
	}
	if rc, err := clientConfig("", "https://10.0.0.1:6443", getenv); err != nil || rc.Host != "https://10.0.0.1:6443" {
		t.Errorf("--master alone: %v, %v; want its host", rc, err)
	}
	if _, err := clientConfig(kubeconfig, "", func(string) string { return "" }); err == nil {
		t.Error("a kubeconfig naming CONTAINER_SANDBOX_MOUNT_POINT loaded without it set")
	}
}

// TestKubeconfigAsWindowsToolsSaveIt: a kubeconfig as Notepad and
// PowerShell 5.1 save it (CRLF, a UTF-8 byte order mark, UTF-16LE with one)
// loads, as client-go loads it. One it cannot decode is an error naming the
// file, as clientcmd's loading rules (kube-proxy's) name it, and saying why
// when it is a Windows path in double quotes or a tab in the indentation.
func TestKubeconfigAsWindowsToolsSaveIt(t *testing.T) {
	const kubeconfig = "apiVersion: v1\r\nkind: Config\r\nclusters:\r\n- name: c\r\n  cluster:\r\n    server: https://127.0.0.1:6443\r\n" +
		"    certificate-authority: CA\r\ncontexts:\r\n- name: c\r\n  context: {cluster: c, user: u}\r\ncurrent-context: c\r\nusers:\r\n- name: u\r\n  user: {token: abc}\r\n"
	utf16 := func(s string) string {
		out, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String(s)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ca, err := filepath.Abs("testdata/hostprocess/ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{
		"CRLF":                     strings.ReplaceAll(kubeconfig, "CA", ca),
		"UTF-8 with BOM":           "\xef\xbb\xbf" + strings.ReplaceAll(kubeconfig, "CA", ca),
		"UTF-16LE with BOM":        utf16(strings.ReplaceAll(kubeconfig, "CA", "'"+ca+"'")),
		"double-quoted path":       strings.ReplaceAll(kubeconfig, "CA", `"C:\k\ca.crt"`),
		"double-quoted path, JSON": `{"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "c", "cluster": {"certificate-authority": "C:\k\ca.crt"}}]}`,
		"tab-indented":             strings.ReplaceAll(kubeconfig, "\r\n    server", "\r\n\tserver"),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			rc, err := clientConfig(path, "", func(string) string { return "" })
			if strings.HasPrefix(name, "double-quoted") {
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "a backslash inside double quotes starts an escape") {
					t.Errorf("err %v, want one naming %s and the backslash", err, path)
				}
				return
			}
			if name == "tab-indented" {
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "YAML indents with spaces only") {
					t.Errorf("err %v, want one naming %s and the tab", err, path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rc.Host != "https://127.0.0.1:6443" || rc.BearerToken != "abc" || rc.TLSClientConfig.CAFile != ca {
				t.Errorf("host %q token %q CA %q; want the file's", rc.Host, rc.BearerToken, rc.TLSClientConfig.CAFile)
			}
		})
	}
}

// TestKubeconfigErrorNamesAWindowsPathAsWritten: the file a kubeconfig
// error names is the path as the operator wrote it, not Go-quoted: quoting
// doubles each backslash of a Windows path (C:\\k\\config), which reads as
// another path, beside a hint that is about backslashes in quotes.
func TestKubeconfigErrorNamesAWindowsPathAsWritten(t *testing.T) {
	// On Windows the directory's path has backslashes; elsewhere a file
	// name may hold one.
	path := filepath.Join(t.TempDir(), `k\config`)
	if runtime.GOOS == "windows" {
		path = filepath.Join(t.TempDir(), "config")
	}
	if err := os.WriteFile(path, []byte("clusters: [{cluster: {certificate-authority: \"C:\\k\\ca.crt\"}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := clientConfig(path, "", func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), `"`+path+`"`) {
		t.Errorf("err %v, want one naming %s as written", err, path)
	}
}

// TestAnEmptyKubeconfigGivesWayToTheInClusterConfig: kube-proxy loads its
// kubeconfig through clientcmd's loading rules, which take a file that
// configures no API server (empty, as a ConfigMap key left empty mounts
// it) for no configuration and, in a pod with a service account, use the
// in-cluster one. hnsproxy refused to start there ("no configuration has
// been provided"). Outside a pod it still does, as kube-proxy does, and
// --master still applies over the empty file.
func TestAnEmptyKubeconfigGivesWayToTheInClusterConfig(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "kubeconfig.conf")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	wasConfig, wasToken := inClusterConfig, serviceAccountToken
	t.Cleanup(func() { inClusterConfig, serviceAccountToken = wasConfig, wasToken })
	inClusterConfig = func() (*rest.Config, error) { return &rest.Config{Host: "https://10.96.0.1:443"}, nil }
	serviceAccountToken = token
	inPod := func(k string) string {
		return map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}[k]
	}
	cfg := &options.Config{}
	cfg.Kubeconfig = empty
	rc, err := RestConfig(cfg, "hnsproxy", inPod)
	if err != nil || rc.Host != "https://10.96.0.1:443" {
		t.Errorf("an empty kubeconfig in a pod: %v, %v; want the in-cluster configuration", rc, err)
	}
	if _, err := RestConfig(cfg, "hnsproxy", func(string) string { return "" }); err == nil {
		t.Error("an empty kubeconfig outside a pod loaded")
	}
	cfg.Master = "https://10.0.0.1:6443"
	if rc, err := RestConfig(cfg, "hnsproxy", inPod); err != nil || rc.Host != cfg.Master {
		t.Errorf("an empty kubeconfig and --master: %v, %v; want --master's host", rc, err)
	}
}
