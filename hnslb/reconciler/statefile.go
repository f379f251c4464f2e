package reconciler

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// stateFileVersion is the schema of the state file.
const stateFileVersion = 1

// stateFile is what hnsproxy persists on the node: the HNS IDs it owns.
type stateFile struct {
	Version         int      `json:"version"`
	LoadBalancers   []string `json:"loadBalancers"`
	RemoteEndpoints []string `json:"remoteEndpoints"`
}

// loadState reads the state file. A missing file (or path "") is an empty
// state; an unreadable or corrupt one is an error.
func loadState(path string) (*stateFile, error) {
	if path == "" {
		return &stateFile{}, nil
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &stateFile{}, nil
	}
	if err != nil {
		return nil, err
	}
	var s stateFile
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("parse state file %s: %w", path, err)
	}
	if s.Version != stateFileVersion {
		return nil, fmt.Errorf("state file %s: unknown version %d", path, s.Version)
	}
	return &s, nil
}

// saveState writes the owned IDs atomically: a temp file in the same
// directory, synced, mode 0600, renamed over the old one.
func (r *Reconciler) saveState() error {
	path := r.opts.StateFile
	if path == "" {
		return nil
	}
	raw, err := json.Marshal(stateFile{
		Version: stateFileVersion,
		// Unsorted: sorting 20k IDs on every write costs more than it helps.
		LoadBalancers:   slices.Collect(maps.Keys(r.ownedLBs)),
		RemoteEndpoints: slices.Collect(maps.Keys(r.ownedEPs)),
	})
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
