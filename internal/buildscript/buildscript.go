// Package buildscript lets Go tests and tools build the repository's binaries
// the one way there is, hack/build.sh, instead of running go build themselves.
package buildscript

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Script is the build script, relative to the repository root.
const Script = "hack/build.sh"

// EnvToolsDir names a folder of prebuilt binaries that Tools uses instead of
// building (the soak and the demo build once and share it).
const EnvToolsDir = "HNSPROXY_TOOLS_DIR"

// Build runs hack/build.sh for the named binaries (see the script for the
// names) and returns the folder they are in. The script's progress goes to
// stderr.
func Build(names ...string) (string, error) { return BuildWith(nil, names...) }

// BuildWith is Build with extra environment for the script, KEY=VALUE
// (GOOS=windows, RELEASE=1, ...).
func BuildWith(env []string, names ...string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir, err := runScript(root, Script, env, names...)
	if err != nil {
		return "", err
	}
	return dir, present(dir, names, env)
}

// Built runs one of the repository's other build scripts (relative to the
// root, without arguments: hack/build-controlplane.sh, hack/build-prometheus.sh)
// and returns the folder it prints, holding the named binaries.
func Built(script string, names ...string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir, err := runScript(root, script, nil)
	if err != nil {
		return "", err
	}
	return dir, present(dir, names, nil)
}

// runScript runs script (relative to root) with args and env added to the
// environment, and returns the folder it prints as its last line, as each
// of the repository's build scripts does. Its progress goes to stderr.
func runScript(root, script string, env []string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.Command(filepath.Join(root, script), args...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Run(); err != nil {
		what := strings.Join(slices.Concat(env, []string{script}, args), " ")
		return "", fmt.Errorf("%s: %w", what, err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[len(lines)-1], nil
}

// Tools returns a folder holding the named binaries: $HNSPROXY_TOOLS_DIR
// when set, otherwise the one Build puts them in.
func Tools(names ...string) (string, error) {
	if dir := os.Getenv(EnvToolsDir); dir != "" {
		return dir, present(dir, names, nil)
	}
	return Build(names...)
}

// present checks the binaries are in dir (with .exe when env builds for Windows).
func present(dir string, names, env []string) error {
	exe := ""
	for _, e := range env {
		if e == "GOOS=windows" {
			exe = ".exe"
		}
	}
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, name+exe)); err != nil {
			return fmt.Errorf("built binaries: %w", err)
		}
	}
	return nil
}

// RepoRoot finds the hnsproxy checkout from the working directory (go test
// runs in the package folder) by looking upwards for the build script.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, Script)); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no hnsproxy checkout (with " + Script + ") above the working directory")
		}
		dir = parent
	}
}
