package reconciler

import "sync"

// dropbox is where HNS calls made on any goroutine (a batch's, one
// abandoned at its deadline that returns late) drop what they learned, for
// the reconciler to take whole under its lock.
type dropbox[T any] struct {
	mu      sync.Mutex
	pending []T
}

// drop adds v, unless limit (> 0) items wait already.
func (d *dropbox[T]) drop(v T, limit int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if limit <= 0 || len(d.pending) < limit {
		d.pending = append(d.pending, v)
	}
}

// drain takes what was dropped.
func (d *dropbox[T]) drain() []T {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.pending
	d.pending = nil
	return out
}
