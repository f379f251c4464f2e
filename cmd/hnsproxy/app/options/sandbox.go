package options

import (
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Where a HostProcess container finds its image and volumes depends on the
// runtime. containerd 1.6 (hcsshim without the bind filter) mounts the image
// at a directory per container and links each volume below it, at its
// mountPath. containerd 1.7 and later (with the bind filter) bind the image
// at C:\hpc and each volume at its mountPath, and link the volumes below
// C:\hpc as well. Both set CONTAINER_SANDBOX_MOUNT_POINT to the image's
// directory and replace %CONTAINER_SANDBOX_MOUNT_POINT% and
// $env:CONTAINER_SANDBOX_MOUNT_POINT on the container's command line, but
// not inside files. hnsproxy replaces the same two forms in the paths its
// configuration and kubeconfig files name, so one manifest serves both.
//
// kubeadm's kube-proxy ConfigMap names its files as Linux paths rooted
// without a drive (/var/lib/kube-proxy/kubeconfig.conf, and
// /var/run/secrets/kubernetes.io/serviceaccount/token in its kubeconfig).
// On containerd 1.7+ these reach the volumes bound at C:\var\...; on 1.6
// they reach nothing, and client-go would even join them to the
// kubeconfig's own directory (on Windows they are not absolute). So in a
// HostProcess container such a path is read below the sandbox mount point
// when the file is there: the same volume on 1.7+, the only copy on 1.6.

// SandboxMountPointEnv is the variable HostProcess runtimes set.
const SandboxMountPointEnv = "CONTAINER_SANDBOX_MOUNT_POINT"

var sandboxRefs = []string{"%" + SandboxMountPointEnv + "%", "$env:" + SandboxMountPointEnv}

// ExpandSandboxPath replaces the sandbox mount point references in path with
// CONTAINER_SANDBOX_MOUNT_POINT's value (from getenv) less its trailing
// separator, as the runtime does on the command line. A path that names it
// while it is unset is an error: it can only resolve in a HostProcess container.
func ExpandSandboxPath(path string, getenv func(string) string) (string, error) {
	if !strings.Contains(path, SandboxMountPointEnv) {
		return path, nil
	}
	root := strings.TrimRight(getenv(SandboxMountPointEnv), `\/`)
	if root == "" {
		return "", fmt.Errorf("path %q names %s, which is not set: it resolves only in a Windows HostProcess container", path, SandboxMountPointEnv)
	}
	for _, ref := range sandboxRefs {
		path = strings.ReplaceAll(path, ref, root)
	}
	return path, nil
}

// ResolveInputPath is where hnsproxy reads a file its flags, config file or
// kubeconfig name: ExpandSandboxPath, then, in a HostProcess container, a
// path rooted without a drive is taken below the sandbox mount point if
// exists reports the file there. Files hnsproxy writes (the state file)
// are never moved into the sandbox: it is a directory per container on 1.6.
func ResolveInputPath(path string, getenv func(string) string, exists func(string) bool) (string, error) {
	path, err := ExpandSandboxPath(path, getenv)
	if err != nil || !rootedWithoutDrive(path) {
		return path, err
	}
	root := strings.TrimRight(getenv(SandboxMountPointEnv), `\/`)
	if root == "" || !exists(root+path) {
		return path, nil
	}
	return root + path, nil
}

// sandboxStateFileWarning warns of a state file below the HostProcess
// container's sandbox mount point (stateFile as expanded, getenv naming
// the mount point), "" for one elsewhere or outside a HostProcess
// container. Unless a hostPath volume mounted there holds it, it is in the
// container's own volume, which Kubernetes creates anew at each container
// start: lost at every restart and upgrade, and with it which load
// balancers hnsproxy owns. Which of the two it is cannot be told from the
// path (volumes are reached below the mount point too), so it is a warning.
func sandboxStateFileWarning(stateFile string, getenv func(string) string) string {
	root := strings.TrimRight(getenv(SandboxMountPointEnv), `\/`)
	if root == "" || len(stateFile) <= len(root) || !strings.EqualFold(stateFile[:len(root)], root) || !isPathSep(stateFile[len(root)]) {
		return ""
	}
	return fmt.Sprintf("--state-file %s is below the HostProcess container's sandbox mount point (%s): unless a hostPath volume mounted there holds it, "+
		"it is in the container's own volume, which Kubernetes creates anew at each start, and the state file is lost at every restart and upgrade, "+
		"and with it which load balancers hnsproxy owns (those of Services deleted meanwhile stay in HNS). Give it a path on the host, such as the default %s",
		stateFile, root, DefaultStateFile())
}

func isPathSep(c byte) bool { return c == '/' || c == '\\' }

// rootedWithoutDrive reports a path like /var/lib/x or \var\lib\x: rooted,
// with neither a drive letter nor a UNC host.
func rootedWithoutDrive(path string) bool {
	return len(path) > 0 && isPathSep(path[0]) && (len(path) == 1 || !isPathSep(path[1]))
}

// FileExists is ResolveInputPath's exists for the real file system.
func FileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// ExpandKubeconfigPaths applies ResolveInputPath to every file a kubeconfig
// names (clientcmd's file references: certificate authorities, client
// certificates and keys, token files, exec commands).
func ExpandKubeconfigPaths(cfg *clientcmdapi.Config, getenv func(string) string, exists func(string) bool) error {
	for _, ref := range clientcmd.GetConfigFileReferences(cfg) {
		p, err := ResolveInputPath(*ref, getenv, exists)
		if err != nil {
			return fmt.Errorf("kubeconfig: %w", err)
		}
		*ref = p
	}
	return nil
}
