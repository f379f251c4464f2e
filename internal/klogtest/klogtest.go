// Package klogtest is for tests: it sends what the process logs
// through klog (every logger that falls back to klog's global one) to a
// buffer at a chosen verbosity, and restores klog when the test ends.
package klogtest

import (
	"bytes"
	"flag"
	"strconv"
	"sync"
	"testing"

	"k8s.io/klog/v2"
)

// Buffer is klog's output during a test.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is what was logged so far.
func (b *Buffer) String() string {
	klog.Flush()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Count is how many times s occurs in what was logged so far.
func (b *Buffer) Count(s string) int {
	klog.Flush()
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Count(b.buf.Bytes(), []byte(s))
}

// Capture sends klog's output, as the daemon's text format writes it at
// -v=verbosity, to a buffer until the test ends.
func Capture(t testing.TB, verbosity int) *Buffer {
	t.Helper()
	state := klog.CaptureState()
	t.Cleanup(func() {
		klog.Flush()
		state.Restore()
	})
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	for name, value := range map[string]string{
		"logtostderr":     "false",
		"one_output":      "true", // each line once, not once per severity it passes
		"stderrthreshold": "FATAL",
		"v":               strconv.Itoa(verbosity),
	} {
		if err := fs.Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	b := &Buffer{}
	klog.SetOutput(b)
	return b
}
