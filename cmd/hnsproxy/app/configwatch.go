package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"
)

// configPoll is how often the config file is checked for changes.
const configPoll = 10 * time.Second

// watchConfigFile returns an error when the file's content changes, as
// kube-proxy does: the process exits and its DaemonSet restarts it with the
// new configuration (a ConfigMap update reaches the pod's volume this way).
func watchConfigFile(ctx context.Context, path string, every time.Duration) error {
	initial, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("watching config file: %w", err)
	}
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		now, err := os.ReadFile(path)
		if err != nil {
			// Mid-update ConfigMap volumes swap a symlink; read again next time.
			continue
		}
		if !bytes.Equal(now, initial) {
			return fmt.Errorf("content of the configuration file %s was updated; exiting so that the new configuration applies", path)
		}
	}
}
