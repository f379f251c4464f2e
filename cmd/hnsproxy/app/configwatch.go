package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"
)

// configWatcher ends the daemon once its --config file holds other bytes than
// the configuration was decoded from, so that the DaemonSet (or the SCM's
// recovery action) starts it again with the new file. A file the restart
// would refuse (broken YAML, a value out of range) does not end it: it is
// reported once and the daemon runs on with what it has, where exiting
// would leave every node of a shared ConfigMap crash-looping with Service
// changes unprogrammed and its health check down.
//
// It reads the file by its path every configPoll where kube-proxy watches
// it with fsnotify and exits on a write or rename of it. A ConfigMap
// volume's file is a link through ..data, which kubelet's atomic writer
// swaps (on Windows it removes ..data, then links it again): the old file
// is removed, never written, and on Windows fsnotify sees only ..data
// change, so kube-proxy's watch misses a ConfigMap edit, while a read of
// the path follows the swap. Comparing bytes also means a file rewritten
// with the same content restarts nothing.
type configWatcher struct {
	path string
	// loaded is what the configuration was decoded from, so that a change
	// made before the watch starts stops the daemon too.
	loaded []byte
	// seen is the other content the last read found. A change counts once
	// two reads in a row find it: one read can meet a file being written
	// in place, cut short, even when the bytes written are the same.
	seen []byte
	// check says whether a restart would start with the file as it now is
	// (options.Config.Recomplete); nil takes every change.
	check func() error
	// rejected is told of a change check refused, once per content;
	// cleared (optional) once the file holds loaded again after that.
	rejected func(error)
	cleared  func()
	refused  []byte
}

// configPoll is how often the --config file is read. kubelet brings a
// ConfigMap edit into the pod's volume a minute or so after it is made, so
// ten seconds add little; a variable so that tests need not wait them.
var configPoll = 10 * time.Second

// newConfigWatcher watches path for content other than loaded that check
// accepts, telling rejected of content it refuses.
func newConfigWatcher(path string, loaded []byte, check func() error, rejected func(error)) *configWatcher {
	return &configWatcher{path: path, loaded: loaded, check: check, rejected: rejected}
}

// wait reads the file at each tick and returns an error once two reads in a
// row found the same content other than loaded and check accepts it, or
// nil when ctx ends.
func (w *configWatcher) wait(ctx context.Context, ticks <-chan time.Time) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
		}
		now, err := os.ReadFile(w.path)
		switch {
		case err != nil:
			// Between kubelet's removal of ..data and its new link (Windows)
			// the path resolves to nothing; read again at the next tick.
			w.seen = nil
		case bytes.Equal(now, w.loaded):
			if w.refused != nil && w.cleared != nil {
				w.cleared()
			}
			w.seen, w.refused = nil, nil
		case w.seen == nil || !bytes.Equal(now, w.seen):
			w.seen = now
		case w.refused != nil && bytes.Equal(now, w.refused):
			// Reported already.
		case w.check != nil && w.refuse(now):
			// Reported now; the daemon runs on.
		default:
			return fmt.Errorf("content of the configuration file %s was updated; exiting so that the new configuration applies", w.path)
		}
	}
}

// refuse reports whether check refuses the file's content now, telling
// rejected if so.
func (w *configWatcher) refuse(now []byte) bool {
	err := w.check()
	if err == nil {
		return false
	}
	w.refused = now
	w.rejected(err)
	return true
}

// watchConfigFile runs w until ctx ends, sending its error to fatal.
func watchConfigFile(ctx context.Context, w *configWatcher, fatal chan<- error) {
	ticker := time.NewTicker(configPoll)
	defer ticker.Stop()
	if err := w.wait(ctx, ticker.C); err != nil {
		select {
		case fatal <- err:
		case <-ctx.Done():
		}
	}
}
