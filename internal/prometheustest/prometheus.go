// Package prometheustest gives tests the Prometheus they check hnsproxy's
// metrics, dashboard and alerts against: prometheus and promtool of the
// release go.mod requires, built by hack/build-prometheus.sh.
package prometheustest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hnsproxy/hnsproxy/internal/buildscript"
)

// Script builds prometheus and promtool at the release go.mod
// requires, relative to the repository root.
const Script = "hack/build-prometheus.sh"

var built struct {
	once sync.Once
	dir  string
	err  error
}

// Dir returns the folder holding prometheus and promtool, running
// hack/build-prometheus.sh once per process to build them or reuse the cached
// ones (it honours PROMETHEUS_BIN_DIR). No binary from PATH stands in: the
// tests hold hnsproxy to the release go.mod names, not to whichever one a
// machine happens to have.
func Dir() (string, error) {
	built.once.Do(func() {
		built.dir, built.err = buildscript.Built(Script, "prometheus", "promtool")
	})
	return built.dir, built.err
}

// Promtool returns promtool's path (see Dir).
func Promtool() (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", fmt.Errorf("promtool: %w", err)
	}
	return filepath.Join(dir, "promtool"), nil
}

// Server returns prometheus's path: $PROMETHEUS_BIN when set (to
// try another release by hand), otherwise the one Dir holds.
func Server() (string, error) {
	if bin := os.Getenv("PROMETHEUS_BIN"); bin != "" {
		return bin, nil
	}
	dir, err := Dir()
	if err != nil {
		return "", fmt.Errorf("prometheus: %w", err)
	}
	return filepath.Join(dir, "prometheus"), nil
}
