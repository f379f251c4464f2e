package reconciler

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// How the state layer meets a file system that misbehaves: which read
// errors are retried, which content is set aside, and how write failures
// are reported. HNS objects carry no owner tag, so the rule is that an
// owned ID is never given up because of a file system hiccup.

// stateStore is the Reconciler's file-system side of the state file.
type stateStore struct {
	fs      stateFS // nil: osFS
	failing bool    // the last state write failed: a failure streak is under way
	// logged holds the failure messages this streak logged at -v=0.
	logged map[string]bool
	// journal is the journal an append left open, and journalID what its
	// path named when it was opened (journal.go, openJournal).
	journal   stateHandle
	journalID fs.FileInfo
	// lines is the buffer the last append's lines were encoded into, kept
	// for the next (save, reusable).
	lines []byte
	// journalGen is the generation the snapshot on disk names: a journal
	// begun now starts with a commit record of that ID (journal.go).
	journalGen string
	// journalAside: the journal as a whole was corrupt at Start (too large,
	// not a regular file). It is set aside, not removed, and only once a
	// snapshot made after it is installed, so that a Start that fails
	// before, or a process killed before, meets it again and takes over
	// again rather than finding the snapshot alone, which looks whole.
	journalAside bool
}

func (r *Reconciler) stateFS() stateFS {
	fsys := r.store.fs
	if fsys == nil {
		fsys = osFS{}
	}
	if r.opts.StateFileSynced != nil {
		return syncTimedFS{stateFS: fsys, clock: r.clock, synced: r.opts.StateFileSynced}
	}
	return fsys
}

// stateReadBackoff is the wait before each retry of a state read that
// failed for a reason other than corruption (a file held by antivirus or a
// backup on Windows, EIO): a few short tries, then Start fails and its
// caller retries Start.
var stateReadBackoff = []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond}

// keptCorrupt is how many set-aside corrupt files of each kind are kept.
const keptCorrupt = 3

// corruptStateError is a snapshot or journal whose content hnsproxy did not
// write: garbage, an unknown version, a symlink, a file too large.
type corruptStateError struct {
	path string
	err  error
}

func (e *corruptStateError) Error() string { return e.err.Error() }
func (e *corruptStateError) Unwrap() error { return e.err }

// stateReadError is a state file that could not be read. It is transient
// (hnslb.IsTransient): retrying Start may succeed, and until then nothing
// may overwrite the file.
type stateReadError struct{ err error }

func (e *stateReadError) Error() string   { return "reading hnsproxy state file: " + e.err.Error() }
func (e *stateReadError) Unwrap() error   { return e.err }
func (e *stateReadError) Transient() bool { return true }

// asCorrupt marks err as corruption of path when it is about content, not
// about reading it.
func asCorrupt(path string, err error) error {
	if errors.Is(err, errNotRegular) || errors.Is(err, errTooLarge) {
		return &corruptStateError{path: path, err: err}
	}
	return err
}

// loadOwned loads the state file for Start. A read error is retried with
// stateReadBackoff and then returned as a stateReadError. A corrupt file is
// logged, set aside as <file>.corrupt-<time> and treated as empty; a
// corrupt journal beside a good snapshot costs only the journal. A corrupt
// snapshot takes its journal aside with it, first: the journal holds
// changes to that snapshot, written by whichever version wrote it (a newer
// one's, on a downgrade), so a retried Start (this one failing later) must
// not replay it alone as this version's records. Until the journal is set
// aside the snapshot stays, and a failure to move it is a read error.
func (r *Reconciler) loadOwned() (*stateFile, error) {
	path := r.opts.StateFile
	r.removeLeftoverTemps()
	for attempt := 0; ; attempt++ {
		s, err := loadStateFrom(r.stateFS(), path)
		var corrupt *corruptStateError
		if errors.As(err, &corrupt) && corrupt.path == path {
			if aerr := r.setAside(journalPath(path)); aerr != nil {
				err = fmt.Errorf("setting aside the journal of a corrupt snapshot: %w", aerr)
			}
		}
		switch {
		case err == nil:
			r.store.journalGen = s.Journal
			if s.staleJournal {
				r.log.Info("The state file's journal is older than its snapshot (a compaction could not remove it, or was cut short); not replayed, and removed with the next snapshot", "path", path)
			}
			if s.newerRecords > 0 {
				r.log.Info("The state file's journal holds records of a newer hnsproxy (a downgrade?); skipped, what it records as owned is kept", "path", path, "records", s.newerRecords)
			}
			if s.snapshotLost {
				r.log.Info("Warning: the state file's journal has no snapshot beside it; objects only the snapshot recorded count as unowned, and this start takes over", "path", path)
			}
			if s.journalStopped != nil {
				// Ownership of some objects is lost: take them over like a first start.
				s.fresh = true
				r.log.Info("Warning: part of the state file's journal was unreadable and skipped; objects of those records count as unowned, and this start takes over", "err", s.journalStopped)
				// The whole journal: set aside by the next compaction (journalAside).
				r.store.journalAside = errors.As(s.journalStopped, &corrupt)
			}
			return s, nil
		case errors.As(err, &corrupt):
			r.log.Error(err, "Ignoring hnsproxy state file: treating every existing HNS object as foreign", "path", path)
			_ = r.setAside(corrupt.path) // logged; a snapshot left in place is replaced by the next one
			return &stateFile{Version: stateFileVersion, fresh: true}, nil
		case attempt == len(stateReadBackoff):
			return nil, &stateReadError{err: err}
		}
		r.log.Error(err, "Reading hnsproxy state file failed; retrying", "path", path, "after", stateReadBackoff[attempt])
		time.Sleep(stateReadBackoff[attempt])
	}
}

// setAside renames a corrupt state file to <path>.corrupt-<time>, for a
// human to look at, and removes all but the newest keptCorrupt of them. It
// returns (and logs) a failed rename; a file that is not there is no
// failure.
func (r *Reconciler) setAside(path string) error {
	r.store.closeJournal()
	aside := path + ".corrupt-" + r.clock.Now().UTC().Format("20060102T150405.000000000Z")
	if err := r.stateFS().Rename(path, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		r.log.Error(err, "Could not set the corrupt state file aside", "path", path)
		return err
	}
	r.log.Info("Set the corrupt state file aside", "path", path, "aside", aside)
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return nil
	}
	var old []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), filepath.Base(path)+".corrupt-") {
			old = append(old, filepath.Join(filepath.Dir(path), e.Name()))
		}
	}
	slices.Sort(old) // the time stamps sort as text
	for _, name := range old[:max(0, len(old)-keptCorrupt)] {
		if err := r.stateFS().Remove(name); err != nil {
			r.log.Error(err, "Could not remove an old corrupt state file", "path", name)
		}
	}
	return nil
}

// removeLeftoverTemps removes the snapshot temp files (writeSnapshot) of a
// process killed while it wrote one: its own removal never ran, and a crash
// loop would otherwise keep a snapshot's worth of disk per kill. Only one
// process uses a state file at a time (LockStateFile), so none of them is
// being written.
func (r *Reconciler) removeLeftoverTemps() {
	if r.opts.StateFile == "" {
		return
	}
	dir, prefix := filepath.Dir(r.opts.StateFile), filepath.Base(r.opts.StateFile)+".tmp"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		name := filepath.Join(dir, e.Name())
		if err := r.stateFS().Remove(name); err != nil {
			r.log.Error(err, "Could not remove a snapshot temp file a killed hnsproxy left", "path", name)
			continue
		}
		r.log.Info("Removed a snapshot temp file a killed hnsproxy left", "path", name)
	}
}

// noteStateWrite reports the outcome of a state file write: every failure
// to Options.StateWriteFailed, marked as the start of a streak when the
// write before succeeded.
func (r *Reconciler) noteStateWrite(err error) error {
	if err == nil {
		if r.store.failing {
			r.log.Info("Writing hnsproxy state file works again", "path", r.opts.StateFile)
		}
		r.store.failing, r.store.logged = false, nil
		return nil
	}
	streakStart := !r.store.failing
	r.store.failing = true
	if r.opts.StateWriteFailed != nil {
		r.opts.StateWriteFailed(fmt.Errorf("state file %s: %w", r.opts.StateFile, err), streakStart)
	}
	return err
}

// logStateWriteFailed logs a failed state file write with msg: an error
// the first time msg comes in a failure streak, then at --v=4, since a
// full disk fails every Sync's write for as long as it lasts (its
// StateFileWriteFailed event is once per streak too).
func (r *Reconciler) logStateWriteFailed(err error, msg string) {
	if r.store.logged[msg] {
		r.log.V(4).Info(msg, "err", err, "path", r.opts.StateFile)
		return
	}
	if r.store.failing {
		if r.store.logged == nil {
			r.store.logged = map[string]bool{}
		}
		r.store.logged[msg] = true
	}
	r.log.Error(err, msg, "path", r.opts.StateFile)
}

// retireJournal removes the journal a new snapshot holds everything of, or
// sets it aside when it was found corrupt as a whole (journalAside).
func (r *Reconciler) retireJournal(path string) error {
	if r.store.journalAside {
		if err := r.setAside(path); err != nil {
			return err
		}
		r.store.journalAside = false
		return nil
	}
	if err := r.stateFS().Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
