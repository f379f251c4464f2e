package reconciler

import (
	"io/fs"
	"slices"
	"strings"
	"sync"
)

// faultFS is osFS with injected failures: fault is asked before each
// operation ("open", "read", "write", "sync", "truncate", "rename",
// "remove", "mkdir") on a path, and a non-nil answer fails it. A failed
// write first writes half its bytes when shortWrites is set, as a disk that
// fills up does.
type faultFS struct {
	osFS
	mu          sync.Mutex
	fault       func(op, name string) error
	shortWrites bool
}

func (f *faultFS) check(op, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fault == nil {
		return nil
	}
	return f.fault(op, name)
}

func (f *faultFS) set(fault func(op, name string) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault = fault
}

func (f *faultFS) OpenFile(name string, flag int, perm fs.FileMode) (stateHandle, error) {
	if err := f.check("open", name); err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	h, err := f.osFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultHandle{stateHandle: h, fs: f, name: name}, nil
}

func (f *faultFS) MkdirAll(dir string) error {
	if err := f.check("mkdir", dir); err != nil {
		return err
	}
	return f.osFS.MkdirAll(dir)
}

func (f *faultFS) Rename(from, to string) error {
	if err := f.check("rename", to); err != nil {
		return err
	}
	return f.osFS.Rename(from, to)
}

func (f *faultFS) Remove(name string) error {
	if err := f.check("remove", name); err != nil {
		return err
	}
	return f.osFS.Remove(name)
}

type faultHandle struct {
	stateHandle
	fs   *faultFS
	name string
}

func (h *faultHandle) Read(p []byte) (int, error) {
	if err := h.fs.check("read", h.name); err != nil {
		return 0, err
	}
	return h.stateHandle.Read(p)
}

func (h *faultHandle) Write(p []byte) (int, error) {
	if err := h.fs.check("write", h.name); err != nil {
		n := 0
		if h.fs.shortWrites {
			n, _ = h.stateHandle.Write(p[:len(p)/2])
		}
		return n, err
	}
	return h.stateHandle.Write(p)
}

func (h *faultHandle) Sync() error {
	if err := h.fs.check("sync", h.name); err != nil {
		return err
	}
	return h.stateHandle.Sync()
}

func (h *faultHandle) Truncate(size int64) error {
	if err := h.fs.check("truncate", h.name); err != nil {
		return err
	}
	return h.stateHandle.Truncate(size)
}

// useStateFS makes r's state layer use f from now on, the journal too:
// r lets go of the journal it holds open.
func useStateFS(r *Reconciler, f stateFS) {
	r.store.closeJournal()
	r.store.fs = f
}

// onJournal limits a fault to the journal, on the given operations.
func onJournal(err error, ops ...string) func(op, name string) error {
	return func(op, name string) error {
		if strings.HasSuffix(name, ".journal") && (len(ops) == 0 || slices.Contains(ops, op)) {
			return err
		}
		return nil
	}
}
