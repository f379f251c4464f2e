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
	path string
	// loaded is what the configuration was decoded from: the watch starts
	// only once HNS and its network are there, and a change made before
	// must stop the daemon too.
	loaded []byte
}

// newConfigWatcher watches path for content other than loaded.
func newConfigWatcher(path string, loaded []byte) *configWatcher {
	return &configWatcher{path: path, loaded: loaded}
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
		if !bytes.Equal(now, w.loaded) {
			return fmt.Errorf("content of the configuration file %s was updated; exiting so that the new configuration applies", w.path)
		}
	}
}
