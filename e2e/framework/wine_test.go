//go:build linux

package framework

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/sim"
)

// The registry of a lane node reports its simulator profile's OS build, the
// same one hnssim reports on the Linux lane; an unknown profile is refused.
func TestWindowsBuildIsTheProfiles(t *testing.T) {
	for _, p := range sim.Profiles() {
		got, err := windowsBuild(p.Name)
		if err != nil || got != p.OSBuild {
			t.Errorf("profile %s: windowsBuild = %v, %v; want %v", p.Name, got, err, p.OSBuild)
		}
	}
	if b, err := windowsBuild("ws2003"); err == nil {
		t.Errorf("unknown profile: windowsBuild = %v, want an error", b)
	}
}
