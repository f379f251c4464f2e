//go:build linux && benche2e

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"time"
)

// proxyLog reads hnsproxy's log as it grows, for four kinds of line: a
// collection's (gctrace.go), at --v=2 an HNS listing's start and end (a
// drift repair or lookup listing, proxier/repair.go), a drift repair's
// summary of what it found gone or changed (reconciler/drifttally.go),
// after which Syncs make those objects again a chunk at a time, and the
// line that says they are done (reconciler/repairwork.go). A listing runs
// beside the syncs and its CPU is many changes' worth, so a change priced
// while one ran would carry it. The runtime writes a collection line's
// parts in several writes, which another thread's log line may fall
// between, but always starts it on a line of its own: a line starting
// "gc " is one collection, whatever follows it. klog writes a line in one
// write, so a listing's line is whole wherever it lands.
type proxyLog struct {
	path    string
	offset  int64
	partial []byte // the log's last line, not ended yet
	seen    logTally
}

// logTally counts the lines a log has shown since it was first read.
type logTally struct {
	collections, listingsStarted, listingsEnded int
	driftFound                                  int
	// workDone counts the lines saying a repair's work was done; the
	// last one's syncs and seconds are kept.
	workDone        int
	lastWorkSyncs   int
	lastWorkSeconds float64
}

// listing reports whether a listing had started and not ended.
func (t logTally) listing() bool { return t.listingsStarted > t.listingsEnded }

// listingLines says whether a listing started or ended between two reads.
func (t logTally) listingLines(since logTally) bool {
	return t.listingsStarted != since.listingsStarted || t.listingsEnded != since.listingsEnded
}

// The messages hnsproxy logs a listing's start and end with.
var (
	listingStartedLine = []byte(`] "HNS listing started"`)
	listingEndedLine   = []byte(`] "HNS listing ended"`)
	driftFoundLine     = []byte(`] "Drift repair found objects of hnsproxy's gone or changed in HNS`)
	workDoneLine       = []byte(`] "Drift repair's work done"`)
	workDoneFields     = regexp.MustCompile(` syncs=(\d+) seconds=([0-9.e+-]+)`)
)

// read reads what the log gained since the last call and returns what it
// has shown since the first.
func (l *proxyLog) read() (logTally, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return l.seen, fmt.Errorf("hnsproxy's log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(l.offset, io.SeekStart); err != nil {
		return l.seen, fmt.Errorf("hnsproxy's log: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return l.seen, fmt.Errorf("hnsproxy's log: %w", err)
	}
	l.offset += int64(len(data))
	data = append(l.partial, data...)
	last := bytes.LastIndexByte(data, '\n')
	l.partial = append([]byte(nil), data[last+1:]...)
	for line := range bytes.SplitSeq(data[:last+1], []byte{'\n'}) {
		if bytes.HasPrefix(line, []byte("gc ")) {
			l.seen.collections++
		}
		if bytes.Contains(line, listingStartedLine) {
			l.seen.listingsStarted++
		}
		if bytes.Contains(line, listingEndedLine) {
			l.seen.listingsEnded++
		}
		if bytes.Contains(line, driftFoundLine) {
			l.seen.driftFound++
		}
		if bytes.Contains(line, workDoneLine) {
			l.seen.workDone++
			if m := workDoneFields.FindSubmatch(line); m != nil {
				l.seen.lastWorkSyncs, _ = strconv.Atoi(string(m[1]))
				l.seen.lastWorkSeconds, _ = strconv.ParseFloat(string(m[2]), 64)
			}
		}
	}
	return l.seen, nil
}

// awaitNoListing returns once the log shows no listing under way, polling
// it every interval until timeout.
func (l *proxyLog) awaitNoListing(ctx context.Context, interval, timeout time.Duration) (logTally, error) {
	return l.await(ctx, interval, timeout, func(t logTally) bool { return !t.listing() }, func(t logTally) error {
		return fmt.Errorf("hnsproxy's log shows a listing under way after %s (%d started, %d ended)", timeout, t.listingsStarted, t.listingsEnded)
	})
}

// awaitDriftFound returns once the log shows a drift repair's summary of
// what it found gone or changed that since had not shown.
func (l *proxyLog) awaitDriftFound(ctx context.Context, since logTally, interval, timeout time.Duration) (logTally, error) {
	return l.await(ctx, interval, timeout, func(t logTally) bool { return t.driftFound > since.driftFound }, func(logTally) error {
		return fmt.Errorf("hnsproxy's log shows no drift repair finding objects gone after %s", timeout)
	})
}

// awaitWorkDone returns once the log shows a repair's work done that
// since had not shown.
func (l *proxyLog) awaitWorkDone(ctx context.Context, since logTally, interval, timeout time.Duration) (logTally, error) {
	return l.await(ctx, interval, timeout, func(t logTally) bool { return t.workDone > since.workDone }, func(logTally) error {
		return fmt.Errorf("hnsproxy's log shows no drift repair's work done after %s", timeout)
	})
}

// await polls the log every interval until done says its tally is done,
// or until timeout, when late says why not.
func (l *proxyLog) await(ctx context.Context, interval, timeout time.Duration, done func(logTally) bool, late func(logTally) error) (logTally, error) {
	deadline := time.Now().Add(timeout)
	for {
		t, err := l.read()
		if err != nil || done(t) {
			return t, err
		}
		if time.Now().After(deadline) {
			return t, late(t)
		}
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-time.After(interval):
		}
	}
}
