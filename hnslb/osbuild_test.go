package hnslb

import (
	"fmt"
	"slices"
	"testing"
)

func TestDefaultBackendCapByBuild(t *testing.T) {
	ws2019, ws2022 := Version{Major: 9, Minor: 5}, Version{Major: 13, Minor: 2}
	for _, c := range []struct {
		build string
		v     Version
		want  int
	}{
		{"10.0.17763.1757", ws2019, 64},
		{"10.0.17763.2745", ws2019, 64},
		{"10.0.17763.2746", ws2019, 1024},
		{"10.0.17763.6893", ws2019, 1024},
		{"10.0.20348.169", ws2022, 1024},
		{"10.0.26100.4061", Version{Major: 15, Minor: 5}, 1024},
		// The build decides, whatever the HNS version says.
		{"10.0.17763.100", ws2022, 64},
	} {
		b := build(c.build)
		if got := DefaultBackendCap(b, c.v); got.Max != c.want || got.Reason == "" {
			t.Errorf("%s on HNS %s: %+v, want %d", c.build, c.v, got, c.want)
		}
	}
	// Unknown build: the HNS version's cap.
	if got := DefaultBackendCap(OSBuild{}, ws2019); got.Max != 64 {
		t.Errorf("unknown build on HNS 9.5: %+v", got)
	}
	if got := DefaultBackendCap(OSBuild{}, ws2022); got.Max != 1024 {
		t.Errorf("unknown build on HNS 13.2: %+v", got)
	}
}

func TestOSBuildString(t *testing.T) {
	if got := (OSBuild{10, 0, 20348, 0}).String(); got != "10.0.20348.0" {
		t.Errorf("String() = %q", got)
	}
	if (OSBuild{}).String() != "unknown" || (OSBuild{}).Known() {
		t.Error("zero build is not unknown")
	}
}

func TestKnownOSBugs(t *testing.T) {
	for _, c := range []struct {
		build string
		want  []OSBug
	}{
		{"10.0.17763.6893", nil},
		{"10.0.20348.169", []OSBug{BugOverlayNodePortRemote}},
		{"10.0.20348.260", []OSBug{BugOverlayNodePortRemote}},
		{"10.0.20348.261", []OSBug{BugL2BridgeDSRPodToService, BugOverlayNodePortRemote}},
		{"10.0.26100.1742", nil},
	} {
		b := build(c.build)
		if got := KnownOSBugs(b); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.build, got, c.want)
		}
	}
	if KnownOSBugs(OSBuild{}) != nil {
		t.Error("an unknown build has known bugs")
	}
}

// build is "10.0.B.U" as an OSBuild.
func build(s string) OSBuild {
	var b OSBuild
	fmt.Sscanf(s, "%d.%d.%d.%d", &b.Major, &b.Minor, &b.Build, &b.UBR)
	return b
}
