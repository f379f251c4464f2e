package reconciler

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// scratchDir is a temp directory removed best-effort: Wine's deletion
// differs enough to fail t.TempDir's cleanup.
func scratchDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hnsproxy-state")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// skipUnderWine skips a test of what Wine does not implement: Wine 8 keeps
// no security descriptors on files, and its symlinks are not reparse points.
func skipUnderWine(t *testing.T, what string) {
	if windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil {
		t.Skipf("Wine does not implement %s; this test needs Windows", what)
	}
}

// TestWindowsStateDirSDDL: the SDDL parses and reads back as itself:
// protected, SYSTEM and Administrators, full control, inherited by children.
func TestWindowsStateDirSDDL(t *testing.T) {
	sd, err := windows.SecurityDescriptorFromString(stateDirSDDL)
	if err != nil {
		t.Fatal(err)
	}
	if got := sd.String(); got != stateDirSDDL {
		t.Errorf("SDDL reads back as %s, want %s", got, stateDirSDDL)
	}
}

type fakeInfo struct {
	os.FileInfo
	mode fs.FileMode
	attr uint32
}

func (f fakeInfo) Mode() fs.FileMode { return f.mode }
func (f fakeInfo) Sys() any          { return &syscall.Win32FileAttributeData{FileAttributes: f.attr} }

// TestWindowsReparsePointAttributes: a symlink, a mount point (irregular),
// or any file carrying FILE_ATTRIBUTE_REPARSE_POINT counts as a reparse
// point; a plain file does not.
func TestWindowsReparsePointAttributes(t *testing.T) {
	for _, c := range []struct {
		info fakeInfo
		want bool
	}{
		{fakeInfo{attr: syscall.FILE_ATTRIBUTE_ARCHIVE}, false},
		{fakeInfo{mode: fs.ModeSymlink}, true},
		{fakeInfo{mode: fs.ModeIrregular}, true},
		{fakeInfo{attr: syscall.FILE_ATTRIBUTE_REPARSE_POINT | syscall.FILE_ATTRIBUTE_ARCHIVE}, true},
	} {
		if got := isReparsePoint(c.info); got != c.want {
			t.Errorf("mode %v attributes %#x: reparse point %v, want %v", c.info.mode, c.info.attr, got, c.want)
		}
	}
}

// TestWindowsStateDirIsForSystemAndAdministratorsOnly: the state directory
// is created with a protected DACL granting SYSTEM and Administrators only.
func TestWindowsStateDirIsForSystemAndAdministratorsOnly(t *testing.T) {
	skipUnderWine(t, "file security descriptors")
	dir := filepath.Join(scratchDir(t), "parent", "state")
	if err := mkdirPrivate(dir); err != nil {
		t.Fatal(err)
	}
	sd, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	got := sd.String()
	if !strings.HasPrefix(got, "D:P") || !strings.Contains(got, "(A;OICI;FA;;;SY)") || !strings.Contains(got, "(A;OICI;FA;;;BA)") || strings.Count(got, "(") != 2 {
		t.Errorf("state directory DACL %s, want %s", got, stateDirSDDL)
	}
	if err := mkdirPrivate(dir); err != nil {
		t.Errorf("mkdirPrivate over an existing directory: %v", err)
	}
}

// TestWindowsReparsePointIsRefused: a symlink at a state path is refused,
// for reading and for appending, and its target is untouched.
func TestWindowsReparsePointIsRefused(t *testing.T) {
	skipUnderWine(t, "symlinks as reparse points")
	dir := scratchDir(t)
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "state.json.journal")
	if err := os.Symlink(victim, link); err != nil {
		t.Skipf("cannot create a symlink here: %v", err)
	}
	if _, err := readStateFile(osFS{}, link); !errors.Is(err, errNotRegular) {
		t.Errorf("read through a symlink: %v, want refused", err)
	}
	if err := new(stateStore).appendJournal(osFS{}, link, []byte("x\n"), true); !errors.Is(err, errNotRegular) {
		t.Errorf("append through a symlink: %v, want refused", err)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious" {
		t.Errorf("symlink target written: %q, %v", b, err)
	}
}

// TestWindowsAJournalHandleCanCutBack: the handle the state layer appends
// to the journal through may set the file's end, as a failed append's
// cut-back does (journal.go), and its writes land at the end. Go opens an
// O_APPEND file on Windows with FILE_APPEND_DATA and without
// FILE_WRITE_DATA, and Windows refuses to set the end of a file through
// such a handle (access denied; Wine does not check, so this test reads
// the handle's granted access rather than truncating).
func TestWindowsAJournalHandleCanCutBack(t *testing.T) {
	path := filepath.Join(scratchDir(t), "state.json.journal")
	for _, line := range []string{"first\n", "second\n"} {
		f, err := osFS{}.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		granted := grantedAccess(t, f)
		if _, err := f.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if granted&windows.FILE_WRITE_DATA == 0 {
			t.Fatalf("the journal handle's access %#x lacks FILE_WRITE_DATA: a failed append could not be cut back", granted)
		}
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "first\nsecond\n" {
		t.Errorf("journal %q, %v; want each append after the last", got, err)
	}
}

// grantedAccess is the access f's handle was granted (FileAccessInformation).
func grantedAccess(t *testing.T, f stateHandle) uint32 {
	t.Helper()
	const fileAccessInformation = 8
	var access uint32
	var iosb windows.IO_STATUS_BLOCK
	if err := windows.NtQueryInformationFile(windows.Handle(f.(*os.File).Fd()), &iosb, (*byte)(unsafe.Pointer(&access)), 4, fileAccessInformation); err != nil {
		t.Fatal(err)
	}
	return access
}

// TestWindowsAFailedAppendIsCutBack: an append whose fsync fails is cut back
// to the journal's length before it, on Windows too. There an O_APPEND
// handle lacks FILE_WRITE_DATA, which setting a file's end needs, so a cut
// through the appending handle was refused (access denied) and the
// refused append's lines stayed in the journal.
func TestWindowsAFailedAppendIsCutBack(t *testing.T) {
	path := filepath.Join(scratchDir(t), "state.json.journal")
	fsys := &faultFS{}
	var s stateStore
	defer s.closeJournal()
	line := func(id string) []byte {
		return encodeRecords([]journalRecord{{Add: true, Kind: recordLoadBalancer, ID: id}, commitRecord})
	}
	if err := s.appendJournal(fsys, path, line("kept"), true); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fsys.set(onJournal(errors.New("injected: the fsync failed"), "sync"))
	err = s.appendJournal(fsys, path, line("refused"), true)
	if err == nil {
		t.Fatal("an append whose fsync failed reported no error")
	}
	if strings.Contains(err.Error(), "cutting the journal back") {
		t.Errorf("the cut-back failed: %v", err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("journal after the failed append:\n%s\nwant it as before:\n%s", after, before)
	}
}
