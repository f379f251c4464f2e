//go:build linux && benche2e

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// saveHeapProfile writes hnsproxy's heap profile (its /debug/pprof/heap,
// served with --profiling; gc=1 collects first, so in-use figures are the
// live heap) to dir/heap-<label>.pprof, for `go tool pprof`.
func saveHeapProfile(ctx context.Context, metricsURL, dir, label string) error {
	return saveProfile(ctx, metricsURL, "heap?gc=1", filepath.Join(dir, "heap-"+label+".pprof"))
}

// saveCPUProfile writes a CPU profile of hnsproxy's next seconds to
// dir/cpu-<label>.pprof.
func saveCPUProfile(ctx context.Context, metricsURL, dir, label string, seconds int) error {
	return saveProfile(ctx, metricsURL, fmt.Sprintf("profile?seconds=%d", seconds), filepath.Join(dir, "cpu-"+label+".pprof"))
}

// saveProfile writes hnsproxy's /debug/pprof/<query> to path.
func saveProfile(ctx context.Context, metricsURL, query, path string) error {
	url := strings.TrimSuffix(metricsURL, "/metrics") + "/debug/pprof/" + query
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
