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
	url := strings.TrimSuffix(metricsURL, "/metrics") + "/debug/pprof/heap?gc=1"
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "heap-"+label+".pprof"))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
