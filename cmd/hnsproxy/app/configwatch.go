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

// configWatcher notices a change of the config file's content. kube-proxy
// exits on such a change and its DaemonSet restarts it with the new
// configuration (how a ConfigMap update takes effect); hnsproxy does the same.
type configWatcher struct {
	path    string
	initial []byte
}

// newConfigWatcher remembers the file's content now.
func newConfigWatcher(path string) (*configWatcher, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("watching config file: %w", err)
	}
	return &configWatcher{path: path, initial: data}, nil
}

// wait returns an error once the content differs, or nil when ctx ends.
func (w *configWatcher) wait(ctx context.Context, every time.Duration) error {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		now, err := os.ReadFile(w.path)
		if err != nil {
			// Mid-update ConfigMap volumes swap a symlink; read again next time.
			continue
		}
		if !bytes.Equal(now, w.initial) {
			return fmt.Errorf("content of the configuration file %s was updated; exiting so that the new configuration applies", w.path)
		}
	}
}
