//go:build linux

package framework

import (
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
		binaries.dir, binaries.err = buildscript.Built(buildScript, etcdName, apiServerName)
	})
	return binaries.dir, binaries.err
}

// RepoRoot finds the hnsproxy checkout from the working directory (go test
// runs in the package folder).
func RepoRoot() (string, error) { return buildscript.RepoRoot() }
