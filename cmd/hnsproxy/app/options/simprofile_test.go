package options

import (
	"regexp"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/sim"
)

// TestSimProfileHelpNamesEveryProfile: --hns-sim-profile takes every
// profile of the simulator, and its --help names them all. The names are
// written out because the daemon's options never import the simulator
// (the Windows binaries leave it out).
func TestSimProfileHelpNamesEveryProfile(t *testing.T) {
	usage := usageOf(t, SectionHNSProxy, "hns-sim-profile")
	words := regexp.MustCompile(`[\w.-]+`).FindAllString(usage, -1)
	for _, p := range sim.Profiles() {
		if !slices.Contains(words, p.Name) {
			t.Errorf("--hns-sim-profile's help does not name profile %s: %q", p.Name, usage)
		}
	}
}
