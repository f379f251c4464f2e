//go:build windows

package hcnclient

import (
	"context"
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/windows/registry"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestOSBuildReadsTheBuildAndItsUpdate: the build is CurrentBuildNumber with
// the UBR (the cumulative update the backend cap and the known OS bugs
// depend on) and the major and minor versions; missing DWORDs read as 0; a
// build number that is not a positive number is an error, not a build
// (0 would read as "unknown" and the cap be guessed). The values are
// written to a key of the test's own under HKCU, laid out as
// HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion.
func TestOSBuildReadsTheBuildAndItsUpdate(t *testing.T) {
	for _, c := range []struct {
		name    string
		build   string
		dwords  map[string]uint32
		want    hnslb.OSBuild
		wantErr bool
	}{
		{name: "Windows Server 2022", build: "20348",
			dwords: map[string]uint32{"UBR": 2700, "CurrentMajorVersionNumber": 10, "CurrentMinorVersionNumber": 0},
			want:   hnslb.OSBuild{Major: 10, Minor: 0, Build: 20348, UBR: 2700}},
		{name: "no major, minor or UBR", build: "17763", want: hnslb.OSBuild{Build: 17763}},
		{name: "build 0", build: "0", dwords: map[string]uint32{"UBR": 1}, wantErr: true},
		{name: "not a number", build: "20348.2700", wantErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := testRegistryKey(t)
			if err := k.SetStringValue("CurrentBuildNumber", c.build); err != nil {
				t.Fatal(err)
			}
			for name, v := range c.dwords {
				if err := k.SetDWordValue(name, v); err != nil {
					t.Fatal(err)
				}
			}
			got, err := osBuildOf(k)
			if c.wantErr {
				if err == nil {
					t.Errorf("CurrentBuildNumber %q read as %v, want an error", c.build, got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("read %v, %v; want %v", got, err, c.want)
			}
		})
	}
	// The client reads the machine's own key (Wine's prefix has one).
	if b, err := (&Client{}).OSBuild(context.Background()); err != nil || b.Build <= 0 {
		t.Errorf("OSBuild of this machine: %v, %v", b, err)
	}
}

// testRegistryKey is a new key under HKCU, deleted when the test ends.
func testRegistryKey(t *testing.T) registry.Key {
	t.Helper()
	path := fmt.Sprintf(`Software\hnsproxy-tests\%s-%d`, t.Name(), os.Getpid())
	k, _, err := registry.CreateKey(registry.CURRENT_USER, path, registry.ALL_ACCESS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		k.Close()
		_ = registry.DeleteKey(registry.CURRENT_USER, path)
	})
	return k
}
