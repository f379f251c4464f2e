//go:build windows

package hcnclient

import (
	"context"
	"fmt"
	"strconv"

	"golang.org/x/sys/windows/registry"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// currentVersionKey holds the running build: CurrentBuildNumber (REG_SZ),
// UBR and CurrentMajorVersionNumber / CurrentMinorVersionNumber (REG_DWORD).
// Reading the registry rather than RtlGetVersion gets the UBR too (the
// cumulative update, which the backend cap and OS bugs depend on), and under
// Wine it reads what a test put there.
const currentVersionKey = `SOFTWARE\Microsoft\Windows NT\CurrentVersion`

// OSBuild reads the Windows build from the registry.
func (c *Client) OSBuild(ctx context.Context) (hnslb.OSBuild, error) {
	if err := ctx.Err(); err != nil {
		return hnslb.OSBuild{}, err
	}
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, currentVersionKey, registry.QUERY_VALUE)
	if err != nil {
		return hnslb.OSBuild{}, fmt.Errorf("reading the OS build: opening HKLM\\%s: %w", currentVersionKey, err)
	}
	defer k.Close()
	return osBuildOf(k)
}

// osBuildOf reads the build from k, a key laid out as currentVersionKey.
func osBuildOf(k registry.Key) (hnslb.OSBuild, error) {
	buildText, _, err := k.GetStringValue("CurrentBuildNumber")
	if err != nil {
		return hnslb.OSBuild{}, fmt.Errorf("reading the OS build: CurrentBuildNumber: %w", err)
	}
	build, err := strconv.Atoi(buildText)
	if err != nil || build <= 0 {
		return hnslb.OSBuild{}, fmt.Errorf("reading the OS build: CurrentBuildNumber %q is not a build number", buildText)
	}
	b := hnslb.OSBuild{Build: build}
	// Missing values read as 0: an older Windows has no major/minor DWORDs.
	for name, into := range map[string]*int{"UBR": &b.UBR, "CurrentMajorVersionNumber": &b.Major, "CurrentMinorVersionNumber": &b.Minor} {
		if v, _, err := k.GetIntegerValue(name); err == nil {
			*into = int(v)
		}
	}
	return b, nil
}
