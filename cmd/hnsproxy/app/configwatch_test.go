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
	done := make(chan error, 1)
	go func() { done <- watchConfigFile(context.Background(), path, time.Millisecond) }()
	if err := os.WriteFile(path, []byte("mode: kernelspace\nwinkernel: {enableDSR: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "was updated") {
		t.Errorf("watch returned %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- watchConfigFile(ctx, path, time.Millisecond) }()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("an unchanged file stopped the daemon: %v", err)
	}
	if err := watchConfigFile(context.Background(), filepath.Join(t.TempDir(), "missing"), time.Millisecond); err == nil {
		t.Error("a missing file was watched")
	}
}
