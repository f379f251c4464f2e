package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestConfigFileChangeStopsTheDaemon(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.conf")
	loaded := []byte("mode: kernelspace\n")
	if err := os.WriteFile(path, loaded, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := newConfigWatcher(path, loaded).wait(ctx, time.Millisecond); err != nil {
		t.Errorf("an unchanged file stopped the daemon: %v", err)
	}
	if err := os.WriteFile(path, []byte("mode: kernelspace\nwinkernel: {enableDSR: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The deadline only keeps a regression from hanging.
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := newConfigWatcher(path, loaded).wait(ctx, time.Millisecond); err == nil || !strings.Contains(err.Error(), "was updated") {
		t.Errorf("wait returned %v", err)
	}
}

// The daemon stops on any change from the bytes its configuration was
// decoded from, not from what the file holds when the watch starts (once
// HNS answers and its network exists, up to --hns-network-timeout later):
// a ConfigMap update landing in between still restarts it.
func TestConfigFileChangedBeforeTheWatchStartsStopsTheDaemon(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.conf")
	const head = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
	if err := os.WriteFile(path, []byte(head+"winkernel: {networkName: cbr0}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := parseConfig(t, "--config="+path, "--hostname-override=win-1")
	if err := os.WriteFile(path, []byte(head+"winkernel: {networkName: cbr0, enableDSR: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := newConfigWatcher(cfg.ConfigFile, cfg.ConfigFileContent)
	// The deadline only keeps a regression from hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.wait(ctx, time.Millisecond); err == nil || !strings.Contains(err.Error(), "was updated") {
		t.Errorf("wait = %v; the file changed after the configuration was read and the daemon runs on with the old one", err)
	}
}
