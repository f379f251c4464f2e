//go:build linux && benche2e

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
)

// The bench runs hnsproxy with GODEBUG=gctrace=1, so the Go runtime writes
// a line to hnsproxy's log as each collection ends ("gc 12 @34.567s 3%:
// ..."). The mix phase reads the log after pricing each change to tell the
// changes a collection ran in from the rest. No clock is matched: the
// meter prices a change up to where the process went quiet, and a marking
// collection keeps it busy, so one that ran during a change has ended, and
// written its line, by the time the change is priced.

// gctraceSetting is the GODEBUG setting that makes the runtime write them.
const gctraceSetting = "gctrace=1"

// proxyEnvironment is hnsproxy's environment for the bench: extra (one
// NAME=VALUE, or empty) and gctrace on; when extra is a GODEBUG, gctrace
// joins its settings.
func proxyEnvironment(extra string) []string {
	if v, ok := strings.CutPrefix(extra, "GODEBUG="); ok {
		if v == "" {
			return []string{"GODEBUG=" + gctraceSetting}
		}
		return []string{"GODEBUG=" + v + "," + gctraceSetting}
	}
	env := []string{"GODEBUG=" + gctraceSetting}
	if extra != "" {
		env = append(env, extra)
	}
	return env
}

// collectionLog counts the collection lines a log gains. The runtime
// writes a line's parts in several writes, which another thread's log line
// may fall between, but always starts it on a line of its own: a line
// starting "gc " is one collection, whatever follows it.
type collectionLog struct {
	path    string
	offset  int64
	partial []byte // the log's last line, not ended yet
	ended   int    // the collection lines read so far
}

// count reads what the log gained since the last call and returns how
// many collections it has shown since the first.
func (c *collectionLog) count() (int, error) {
	f, err := os.Open(c.path)
	if err != nil {
		return c.ended, fmt.Errorf("hnsproxy's log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(c.offset, io.SeekStart); err != nil {
		return c.ended, fmt.Errorf("hnsproxy's log: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return c.ended, fmt.Errorf("hnsproxy's log: %w", err)
	}
	c.offset += int64(len(data))
	data = append(c.partial, data...)
	last := bytes.LastIndexByte(data, '\n')
	c.partial = append([]byte(nil), data[last+1:]...)
	for line := range bytes.SplitSeq(data[:last+1], []byte{'\n'}) {
		if bytes.HasPrefix(line, []byte("gc ")) {
			c.ended++
		}
	}
	return c.ended, nil
}
