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
	if err := os.WriteFile(path, []byte("mode: kernelspace\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := newConfigWatcher(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("mode: kernelspace\nwinkernel: {enableDSR: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := w.wait(context.Background(), time.Millisecond); err == nil || !strings.Contains(err.Error(), "was updated") {
		t.Errorf("wait returned %v", err)
	}

	same, err := newConfigWatcher(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := same.wait(ctx, time.Millisecond); err != nil {
		t.Errorf("an unchanged file stopped the daemon: %v", err)
	}
	if _, err := newConfigWatcher(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file was watched")
	}
}
