package atomicfile

import (
	"errors"
	"io/fs"
	"slices"
	"testing"
)

// recordingFile is a File that records its calls and fails the one named
// by failing.
type recordingFile struct {
	calls   []string
	failing string
}

func (f *recordingFile) call(name string) error {
	f.calls = append(f.calls, name)
	if name == f.failing {
		return errors.New(name + " failed")
	}
	return nil
}

func (f *recordingFile) Write(p []byte) (int, error) { return len(p), f.call("write") }
func (f *recordingFile) Chmod(fs.FileMode) error     { return f.call("chmod") }
func (f *recordingFile) Sync() error                 { return f.call("sync") }
func (f *recordingFile) Close() error                { return f.call("close") }

// TestFillSyncsBeforeClosingAndReturnsTheirErrors: the data reaches the
// disk (Sync) before the file is closed and renamed into place, and a
// failed Sync fails Fill, so Write renames nothing a power loss could
// leave empty, as does a failed Close; the file is closed whatever failed.
func TestFillSyncsBeforeClosingAndReturnsTheirErrors(t *testing.T) {
	for _, tc := range []struct {
		failing string
		calls   []string
	}{
		{"", []string{"write", "chmod", "sync", "close"}},
		{"sync", []string{"write", "chmod", "sync", "close"}},
		{"close", []string{"write", "chmod", "sync", "close"}}, // a close can report a failed write-back
	} {
		f := &recordingFile{failing: tc.failing}
		err := Fill(f, []byte("data"), 0o600)
		if !slices.Equal(f.calls, tc.calls) {
			t.Errorf("failing %q: calls %v, want %v", tc.failing, f.calls, tc.calls)
		}
		if (err != nil) != (tc.failing != "") {
			t.Errorf("failing %q: Fill returned %v", tc.failing, err)
		}
	}
}
