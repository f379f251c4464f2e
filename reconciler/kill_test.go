package reconciler

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// The state file's crash safety, step by step: a scripted run of Syncs is
// repeated, killed before each of its steps in turn (every HNS write and
// every state file operation), and a new reconciler starts on what the kill
// left. Two kills: the process (every completed write stays in the file)
// and the node losing power (the journal keeps only what an fsync made
// durable; a snapshot is fsynced before its rename, so it stays).

// errKilled is what a killed process's calls get: they never happen.
var errKilled = errors.New("killed")

// killSwitch counts steps and stops every one from the kill on.
type killSwitch struct {
	mu     sync.Mutex
	steps  int
	killAt int // the step before which the process dies; 0: never
}

// step reports whether the next step may happen (the process is alive).
func (k *killSwitch) step() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dead() {
		return false
	}
	k.steps++
	if k.killAt > 0 && k.steps >= k.killAt {
		k.steps--
		k.killAt = -1
		return false
	}
	return true
}

func (k *killSwitch) alive() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return !k.dead()
}

func (k *killSwitch) dead() bool { return k.killAt < 0 }

// die kills the process now.
func (k *killSwitch) die() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.killAt = -1
}

func (k *killSwitch) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.steps
}

// killClient is HNS as a process that may be killed sees it: every write is
// a step; after the kill nothing reaches HNS.
type killClient struct {
	hnslb.Client
	k *killSwitch
}

func (c *killClient) CreateEndpoint(ctx context.Context, n string, ep *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	if !c.k.step() {
		return nil, errKilled
	}
	return c.Client.CreateEndpoint(ctx, n, ep)
}

func (c *killClient) DeleteEndpoint(ctx context.Context, id string) error {
	if !c.k.step() {
		return errKilled
	}
	return c.Client.DeleteEndpoint(ctx, id)
}

func (c *killClient) CreateLoadBalancer(ctx context.Context, l *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	if !c.k.step() {
		return nil, errKilled
	}
	return c.Client.CreateLoadBalancer(ctx, l)
}

func (c *killClient) UpdateLoadBalancer(ctx context.Context, id string, l *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	if !c.k.step() {
		return nil, errKilled
	}
	return c.Client.UpdateLoadBalancer(ctx, id, l)
}

func (c *killClient) DeleteLoadBalancer(ctx context.Context, id string) error {
	if !c.k.step() {
		return errKilled
	}
	return c.Client.DeleteLoadBalancer(ctx, id)
}

// killFS is the state file system of a process that may be killed: each
// operation that changes a file is a step; it also keeps, per file, the
// length an fsync made durable.
type killFS struct {
	osFS
	k      *killSwitch
	mu     sync.Mutex
	synced map[string]int64
	// noDiskSync: an fsync only records the durable length, as the
	// random histories' thousands of them would wait on the disk for
	// nothing a test reads.
	noDiskSync bool
}

func (f *killFS) OpenFile(name string, flag int, perm fs.FileMode) (stateHandle, error) {
	writes := flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE) != 0
	if writes && !f.k.step() || !writes && !f.k.alive() {
		return nil, errKilled
	}
	h, err := f.osFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &killHandle{stateHandle: h, fs: f, name: name}, nil
}

func (f *killFS) MkdirAll(dir string) error {
	if !f.k.step() {
		return errKilled
	}
	return f.osFS.MkdirAll(dir)
}

func (f *killFS) Rename(from, to string) error {
	if !f.k.step() {
		return errKilled
	}
	return f.osFS.Rename(from, to)
}

func (f *killFS) Remove(name string) error {
	if !f.k.step() {
		return errKilled
	}
	f.mu.Lock()
	delete(f.synced, name)
	f.mu.Unlock()
	return f.osFS.Remove(name)
}

// powerLoss cuts the journal back to what an fsync made durable.
func (f *killFS) powerLoss(t testing.TB, journal string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	info, err := os.Stat(journal)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if keep := f.synced[journal]; keep < info.Size() {
		if err := os.Truncate(journal, keep); err != nil {
			t.Fatal(err)
		}
	}
}

type killHandle struct {
	stateHandle
	fs   *killFS
	name string
}

func (h *killHandle) Read(p []byte) (int, error) {
	if !h.fs.k.alive() {
		return 0, errKilled
	}
	return h.stateHandle.Read(p)
}

func (h *killHandle) Write(p []byte) (int, error) {
	if !h.fs.k.step() {
		return 0, errKilled
	}
	return h.stateHandle.Write(p)
}

func (h *killHandle) Truncate(size int64) error {
	if !h.fs.k.step() {
		return errKilled
	}
	h.fs.mu.Lock()
	h.fs.synced[h.name] = min(h.fs.synced[h.name], size)
	h.fs.mu.Unlock()
	return h.stateHandle.Truncate(size)
}

func (h *killHandle) Chmod(mode fs.FileMode) error {
	if !h.fs.k.step() {
		return errKilled
	}
	return h.stateHandle.Chmod(mode)
}

func (h *killHandle) Sync() error {
	if !h.fs.k.step() {
		return errKilled
	}
	if !h.fs.noDiskSync {
		if err := h.stateHandle.Sync(); err != nil {
			return err
		}
	}
	info, err := h.stateHandle.Stat()
	if err != nil {
		return err
	}
	h.fs.mu.Lock()
	h.fs.synced[h.name] = info.Size()
	h.fs.mu.Unlock()
	return nil
}
