//go:build linux

package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hnsproxy/hnsproxy/internal/buildscript"
)

const buildScript = "hack/build-controlplane.sh"

var binaries struct {
	once sync.Once
	dir  string
	err  error
}

// Binaries returns the folder holding kube-apiserver and etcd, running
// hack/build-controlplane.sh once per process to build them or reuse the
// cached ones. The script's progress goes to stderr; it honours
// CONTROLPLANE_BIN_DIR.
func Binaries() (string, error) {
	binaries.once.Do(func() {
		binaries.dir, binaries.err = runBuildScript()
	})
	return binaries.dir, binaries.err
}

func runBuildScript() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir, err := buildscript.RunScript(root, buildScript, nil)
	if err != nil {
		return "", err
	}
	for _, name := range []string{etcdName, apiServerName} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("%s did not produce %s: %w", buildScript, name, err)
		}
	}
	return dir, nil
}

// RepoRoot finds the hnsproxy checkout from the working directory (go test
// runs in the package folder).
func RepoRoot() (string, error) { return buildscript.RepoRoot() }
