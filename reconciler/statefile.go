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

	"github.com/hnsproxy/hnsproxy/intent"
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
	CreatingLoadBalancers   []intent.LBKey `json:"creatingLoadBalancers,omitempty"`
	CreatingRemoteEndpoints []string       `json:"creatingRemoteEndpoints,omitempty"`

	// journalStopped is why the journal's replay ended before its end.
	journalStopped error
}

// loadState reads the state file: the snapshot, then its journal replayed
// over it. A missing snapshot (or path "") is an empty state; an unreadable
// or corrupt snapshot is an error. A journal that stops early (a torn last
// write) is not: what it held up to there counts, and journalStopped says
// why the rest did not.
func loadState(path string) (*stateFile, error) {
	if path == "" {
		return &stateFile{Version: stateFileVersion}, nil
	}
	s := &stateFile{Version: stateFileVersion}
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(raw, s); err != nil {
			return nil, fmt.Errorf("parse state file %s: %w", path, err)
		}
		if s.Version != stateFileVersion {
			return nil, fmt.Errorf("state file %s: unknown version %d", path, s.Version)
		}
	}
	sets := setsOf(s)
	applied, stopped, err := replayJournal(journalPath(path), sets)
	if err != nil {
		return nil, err
	}
	if applied == 0 && stopped == nil {
		return s, nil
	}
	out := sets.file()
	out.journalStopped = stopped
	return out, nil
}

// journal queues a state change for the next saveState.
func (r *Reconciler) journal(rec journalRecord) {
	if r.opts.StateFile != "" {
		r.unsaved = append(r.unsaved, rec)
	}
}

// saveState makes the queued state changes durable: appended to the journal
// with one fsync, or, once the journal has outgrown the owned set, folded
// with it into a new snapshot. On failure they stay queued for the next try.
func (r *Reconciler) saveState() error {
	if r.opts.StateFile == "" || len(r.unsaved) == 0 && !r.snapshotDue {
		return nil
	}
	if r.snapshotDue || r.journalLines+len(r.unsaved) > compactAfter(len(r.ownedLBs)+len(r.ownedEPs)) {
		return r.compactState()
	}
	lines, err := encodeRecords(r.unsaved)
	if err != nil {
		return err
	}
	if err := appendJournal(journalPath(r.opts.StateFile), lines); err != nil {
		return err
	}
	r.journalLines += len(r.unsaved)
	r.unsaved = nil
	return nil
}

// compactState writes the whole state as a new snapshot, then empties the
// journal. A crash between the two leaves a snapshot and an old journal
// whose replay changes nothing: every record in it is already in the
// snapshot, in order.
func (r *Reconciler) compactState() error {
	if r.opts.StateFile == "" {
		return nil
	}
	if err := r.writeSnapshot(); err != nil {
		return err
	}
	r.unsaved, r.snapshotDue = nil, false
	if err := os.Remove(journalPath(r.opts.StateFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	r.journalLines = 0
	return nil
}

// writeSnapshot writes the owned IDs atomically: a temp file in the same
// directory, synced, mode 0600, renamed over the old one.
func (r *Reconciler) writeSnapshot() error {
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
func (r *Reconciler) declareCreates(lbs map[intent.LBKey]struct{}, ips []string) {
	if r.opts.StateFile == "" {
		return
	}
	grew := false
	for k := range lbs {
		// With ModifyLoadBalancer a realized one is changed in place.
		if e := r.lbs[k]; e != nil && e.desired != nil && (e.realizedID == "" || !r.opts.Features.ModifyLoadBalancer) && addNew(r.creatingLBs, k) {
			r.journal(journalRecord{Add: true, Kind: recordCreatingLB, Key: &k})
			grew = true
		}
	}
	for _, ip := range ips {
		if ep := r.eps[ip]; ep != nil && ep.desired() && (ep.id == "" || !remoteMatches(ep.spec, ep.realizedSpec)) && addNew(r.creatingEPs, ip) {
			r.journal(journalRecord{Add: true, Kind: recordCreatingEndpoint, ID: ip})
			grew = true
		}
	}
	if !grew {
		return
	}
	if err := r.saveState(); err != nil {
		r.log.Error(err, "Writing hnsproxy state file failed before creating objects", "path", r.opts.StateFile)
	}
}

// settleCreates keeps, after a Sync, only the keys and IPs whose create is
// still uncertain.
func (r *Reconciler) settleCreates() {
	for k := range r.creatingLBs {
		if e := r.lbs[k]; e == nil || e.uncertain == nil {
			delete(r.creatingLBs, k)
			r.journal(journalRecord{Kind: recordCreatingLB, Key: &k})
		}
	}
	for ip := range r.creatingEPs {
		if ep := r.eps[ip]; ep == nil || !ep.uncertain {
			delete(r.creatingEPs, ip)
			r.journal(journalRecord{Kind: recordCreatingEndpoint, ID: ip})
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
