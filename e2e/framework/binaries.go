//go:build linux

package framework

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
	var out bytes.Buffer
	cmd := exec.Command(filepath.Join(root, buildScript))
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w", buildScript, err)
	}
	// The script prints the bin folder as its last line.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	dir := lines[len(lines)-1]
	for _, name := range []string{etcdName, apiServerName} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("%s did not produce %s: %w", buildScript, name, err)
		}
	}
	return dir, nil
}

// RepoRoot finds the hnsproxy checkout from the working directory (go test
// runs in the package folder) by looking upwards for the build script.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, buildScript)); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no hnsproxy checkout (with " + buildScript + ") above the working directory")
		}
		dir = parent
	}
}
