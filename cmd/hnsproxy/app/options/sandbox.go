package options

import (
	"fmt"
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

// ExpandKubeconfigPaths applies ExpandSandboxPath to every file a kubeconfig
// names (clientcmd's file references: certificate authorities, client
// certificates and keys, token files, exec commands).
func ExpandKubeconfigPaths(cfg *clientcmdapi.Config, getenv func(string) string) error {
	for _, ref := range clientcmd.GetConfigFileReferences(cfg) {
		p, err := ExpandSandboxPath(*ref, getenv)
		if err != nil {
			return fmt.Errorf("kubeconfig: %w", err)
		}
		*ref = p
	}
	return nil
}
