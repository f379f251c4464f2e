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
	// CreatingLoadBalancers and CreatingRemoteEndpoints are written before
	// creates whose IDs might never reach this file (hnsproxy killed
	// mid-Sync, a reply lost on the way back): at Start, an object nobody
	// owns on such a key or IP is claimed as ours.
	CreatingLoadBalancers   []LBKey  `json:"creatingLoadBalancers,omitempty"`
	CreatingRemoteEndpoints []string `json:"creatingRemoteEndpoints,omitempty"`
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
		LoadBalancers:           slices.Collect(maps.Keys(r.ownedLBs)),
		RemoteEndpoints:         slices.Collect(maps.Keys(r.ownedEPs)),
		CreatingLoadBalancers:   slices.Collect(maps.Keys(r.creatingLBs)),
		CreatingRemoteEndpoints: slices.Collect(maps.Keys(r.creatingEPs)),
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

// declareCreates saves, before this Sync writes anything, every key and IP
// it may create (with those still uncertain), when that set grew. Without
// it a crash between a create and the state file write, or a lost reply
// followed by a crash, leaves an object no one owns: a leak for good.
func (r *Reconciler) declareCreates(lbs map[LBKey]struct{}, ips []string) {
	if r.opts.StateFile == "" {
		return
	}
	grew := false
	for k := range lbs {
		// With ModifyLoadBalancer a realized one is changed in place.
		if e := r.lbs[k]; e != nil && e.desired != nil && (e.realizedID == "" || !r.opts.Features.ModifyLoadBalancer) {
			grew = addNew(r.creatingLBs, k) || grew
		}
	}
	for _, ip := range ips {
		if ep := r.eps[ip]; ep != nil && ep.desired() && (ep.id == "" || !remoteMatches(ep.spec, ep.realizedSpec)) {
			grew = addNew(r.creatingEPs, ip) || grew
		}
	}
	if !grew {
		return
	}
	if err := r.saveState(); err != nil {
		r.log.Error(err, "Writing hnsproxy state file failed before creating objects", "path", r.opts.StateFile)
		return
	}
	r.stateChanged = false
}

// settleCreates keeps, after a Sync, only the keys and IPs whose create is
// still uncertain.
func (r *Reconciler) settleCreates() {
	for k := range r.creatingLBs {
		if e := r.lbs[k]; e == nil || e.uncertain == nil {
			delete(r.creatingLBs, k)
			r.stateChanged = true
		}
	}
	for ip := range r.creatingEPs {
		if ep := r.eps[ip]; ep == nil || !ep.uncertain {
			delete(r.creatingEPs, ip)
			r.stateChanged = true
		}
	}
}

func addNew[K comparable](m map[K]struct{}, k K) bool {
	if _, ok := m[k]; ok {
		return false
	}
	m[k] = struct{}{}
	return true
}
