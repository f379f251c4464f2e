package reconciler

import (
	"io/fs"
	"time"

	"k8s.io/utils/clock"
)

// syncTimedFS reports each fsync of a file it opened, with its duration,
// to Options.StateFileSynced: on most nodes the state file's fsyncs are the
// dearest part of a change that creates (a declaration must be durable
// first), so their count and time are worth a metric of their own.
type syncTimedFS struct {
	stateFS
	clock  clock.PassiveClock
	synced func(time.Duration)
}

func (f syncTimedFS) OpenFile(name string, flag int, perm fs.FileMode) (stateHandle, error) {
	h, err := f.stateFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return syncTimedHandle{stateHandle: h, fs: f}, nil
}

type syncTimedHandle struct {
	stateHandle
	fs syncTimedFS
}

func (h syncTimedHandle) Sync() error {
	start := h.fs.clock.Now()
	err := h.stateHandle.Sync()
	h.fs.synced(h.fs.clock.Since(start))
	return err
}
