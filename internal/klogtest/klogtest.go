// Package klogtest is for tests: it sends what the process logs
// through klog (every logger that falls back to klog's global one) to a
// buffer at a chosen verbosity, and restores klog when the test ends; or
// gives a logger of its own that writes to a buffer, for a test whose
// code takes its logger from a context or an option.
package klogtest

import (
	"bytes"
	"context"
	"flag"
	"strconv"
	"sync"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
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

// Logger is a logger that writes, as the daemon's text format does at
// -v=verbosity, to the buffer it returns. Unlike Capture it leaves klog's
// global logger alone, so other tests' goroutines do not write into it.
func Logger(verbosity int) (klog.Logger, *Buffer) {
	b := &Buffer{}
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(b), textlogger.Verbosity(verbosity))), b
}

// Context is ctx carrying Logger(verbosity), and its buffer.
func Context(ctx context.Context, verbosity int) (context.Context, *Buffer) {
	logger, b := Logger(verbosity)
	return klog.NewContext(ctx, logger), b
}
