package reconciler

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// TestWindowsStateDirWritersAreRead: who may write a state directory, read
// from its security descriptor. Only SYSTEM, Administrators,
// TrustedInstaller and the process's own user may own it or hold a right
// to change it; read rights, deny entries and CREATOR OWNER do not count.
// The descriptors are those hnsproxy makes, and those a directory gets
// under C:\ProgramData, where every user may make folders.
func TestWindowsStateDirWritersAreRead(t *testing.T) {
	const user = "S-1-5-21-1004336348-1177238915-682003330-1001"
	self, err := windows.StringToSid(user)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, sddl string
		self       *windows.SID
		refused    string // part of the reason, "" when private
	}{
		{"hnsproxy's, owned by SYSTEM", "O:SY" + stateDirSDDL, nil, ""},
		{"hnsproxy's, owned by Administrators", "O:BA" + stateDirSDDL, nil, ""},
		{"an empty DACL: no one may do anything", "O:SYD:P", nil, ""},
		{"read and execute for Users, a deny for Everyone", "O:BAD:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)(D;OICI;FA;;;WD)", nil, ""},
		{"CREATOR OWNER's inherit-only entry", "O:SYD:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICIIO;GA;;;CO)", nil, ""},
		{"owned by this process's user", "O:" + user + "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;" + user + ")", self, ""},
		{"made first by another user under C:\\ProgramData", "O:" + user + "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICIIO;GA;;;CO)(A;OICI;0x1200a9;;;BU)", nil, "owned by"},
		{"an administrator's folder under C:\\ProgramData", "O:BAD:(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIIOID;GA;;;CO)(A;OICIID;0x1200a9;;;BU)(A;CIID;0x100116;;;BU)", nil, "write it"},
		{"write on the files inside, for Authenticated Users", "O:SYD:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICIIO;0x1301bf;;;AU)", nil, "write it"},
		{"WRITE_DAC for Users", "O:SYD:P(A;OICI;FA;;;SY)(A;;0x40000;;;BU)", nil, "write it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sd, err := windows.SecurityDescriptorFromString(c.sddl)
			if err != nil {
				t.Fatal(err)
			}
			got := othersMayWrite(sd, c.self)
			if c.refused == "" && got != "" || c.refused != "" && !strings.Contains(got, c.refused) {
				t.Errorf("%s: %q, want %q", c.sddl, got, c.refused)
			}
		})
	}
}

// TestWindowsStateDirWithANullDACLIsRefused: a NULL DACL (present, no
// list) gives everyone full control. Built by hand: Wine's SDDL parser
// reads "D:NO_ACCESS_CONTROL" as an empty DACL, which gives no one any.
func TestWindowsStateDirWithANullDACLIsRefused(t *testing.T) {
	system, err := windows.CreateWellKnownSid(windows.WinLocalSystemSid)
	if err != nil {
		t.Fatal(err)
	}
	sd, err := windows.NewSecurityDescriptor()
	if err != nil {
		t.Fatal(err)
	}
	if err := sd.SetOwner(system, false); err != nil {
		t.Fatal(err)
	}
	if err := sd.SetDACL(nil, true, false); err != nil {
		t.Fatal(err)
	}
	if got := othersMayWrite(sd, nil); !strings.Contains(got, "no DACL") {
		t.Errorf("a NULL DACL: %q, want refused", got)
	}
}

// TestWindowsStateDirOthersCanWriteIsRefused: the lock refuses a state
// directory that exists with an ACL letting Users write, and takes the one
// mkdirPrivate makes.
func TestWindowsStateDirOthersCanWriteIsRefused(t *testing.T) {
	skipUnderWine(t, "file security descriptors")
	base := scratchDir(t)
	own := filepath.Join(base, "own")
	lock, err := LockStateFile(filepath.Join(own, "state.json"))
	if err != nil {
		t.Fatalf("lock in the directory hnsproxy made: %v", err)
	}
	lock.Release()

	open := filepath.Join(base, "open")
	sd, err := windows.SecurityDescriptorFromString("D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;FA;;;BU)")
	if err != nil {
		t.Fatal(err)
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	p, err := windows.UTF16PtrFromString(open)
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.CreateDirectory(p, sa); err != nil {
		t.Fatal(err)
	}
	if lock, err := LockStateFile(filepath.Join(open, "state.json")); !errors.Is(err, ErrStateDirNotPrivate) {
		lock.Release()
		t.Errorf("lock in a directory Users may write: %v, want ErrStateDirNotPrivate", err)
	}
}
