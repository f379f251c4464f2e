package reconciler

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// privateDirText is how hnsproxy makes its state directory here.
const privateDirText = "for SYSTEM and Administrators only"

// Access rights that let a holder change what the directory holds or who
// may: add a file or folder, delete a child, delete or rename the folder,
// change its ACL or owner (generic rights included: an inherit-only ACE
// may carry them).
const dirWriteRights = 0x2 | 0x4 | 0x40 | windows.DELETE | windows.WRITE_DAC | windows.WRITE_OWNER |
	windows.GENERIC_WRITE | windows.GENERIC_ALL

// accessAllowedCallbackACEType is ACCESS_ALLOWED_CALLBACK_ACE_TYPE: an
// allow ACE with a condition, laid out as ACCESS_ALLOWED_ACE up to its SID.
const accessAllowedCallbackACEType = 9

// trustedInstaller is NT SERVICE\TrustedInstaller, which owns and may
// write much of a Windows installation.
const trustedInstaller = "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464"

// checkPrivateDir refuses dir unless it is a directory (not a reparse
// point) owned by SYSTEM, Administrators or this process's user, whose
// DACL lets no one else write. A directory hnsproxy made (mkdirPrivate)
// passes; so does one an administrator locked down the same way.
func checkPrivateDir(dir string) error {
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if isReparsePoint(info) {
		return notPrivate(dir, "it is a reparse point (a link or junction to elsewhere)")
	}
	sd, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("reading the ACL of the state directory %s: %w", dir, err)
	}
	if why := othersMayWrite(sd, processUser()); why != "" {
		return notPrivate(dir, why)
	}
	return nil
}

// othersMayWrite says who other than SYSTEM, Administrators,
// TrustedInstaller and self (nil: nobody) the security descriptor lets
// write, or "" if nobody. The owner counts: an owner may always rewrite
// the DACL. CREATOR OWNER's ACEs stand for whoever creates a child, who
// must be one of those already; deny ACEs only take rights away.
func othersMayWrite(sd *windows.SECURITY_DESCRIPTOR, self *windows.SID) string {
	trusted := func(sid *windows.SID) bool {
		return sid.IsWellKnown(windows.WinLocalSystemSid) || sid.IsWellKnown(windows.WinBuiltinAdministratorsSid) ||
			sid.String() == trustedInstaller || self != nil && sid.Equals(self)
	}
	owner, _, err := sd.Owner()
	switch {
	case err != nil || owner == nil:
		return "it has no owner"
	case !trusted(owner):
		return "it is owned by " + accountName(owner)
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		return "it has no DACL, which gives everyone full control"
	}
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return fmt.Sprintf("its ACL cannot be read (entry %d: %v)", i, err)
		}
		if t := ace.Header.AceType; t != windows.ACCESS_ALLOWED_ACE_TYPE && t != accessAllowedCallbackACEType {
			continue
		}
		if uint32(ace.Mask)&dirWriteRights == 0 {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		if trusted(sid) || sid.IsWellKnown(windows.WinCreatorOwnerSid) {
			continue
		}
		return "its ACL lets " + accountName(sid) + " write it"
	}
	return ""
}

// accountName is DOMAIN\name (SID) where the SID resolves, else the SID.
func accountName(sid *windows.SID) string {
	if account, domain, _, err := sid.LookupAccount(""); err == nil {
		return fmt.Sprintf(`%s\%s (%s)`, domain, account, sid)
	}
	return sid.String()
}

// processUser is this process's user SID, nil if it cannot be read.
func processUser() *windows.SID {
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil
	}
	return user.User.Sid
}
