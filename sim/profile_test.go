package sim

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestProfiles(t *testing.T) {
	tests := []struct {
		name                        string
		dsr, affinity, ipv6, modify bool
		maxBackends                 int
		quirk                       bool
	}{
		{ProfileWS2019, true, false, false, false, 64, false},
		{ProfileWS2019Lifted, true, false, false, false, 1024, false},
		{ProfileWS2022, true, true, true, false, 1024, false},
		{ProfileWS2022RTM, true, true, true, false, 1024, false},
		{ProfileWS2022KB, true, true, true, false, 1024, false},
		{ProfileWS2022Cap64, true, true, true, false, 64, false},
		{ProfileWS2025Mod4, true, true, true, false, 1024, true},
		{ProfileWS2025, true, true, true, true, 1024, false},
	}
	for _, tc := range tests {
		p, err := ProfileByName(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		f := p.Features()
		if f.DSR != tc.dsr || f.SessionAffinity != tc.affinity || f.IPv6DualStack != tc.ipv6 ||
			f.ModifyLoadBalancer != tc.modify || f.MaxBackends != tc.maxBackends || p.ModifyQuirk != tc.quirk || !f.APIV2 {
			t.Errorf("%s: features %+v", tc.name, f)
		}
		h := New(Options{Profile: p})
		v, err := h.Version(ctx)
		if err != nil || v != p.Version {
			t.Errorf("%s: Version() = %v, %v", tc.name, v, err)
		}
		if b, err := h.OSBuild(ctx); err != nil || b != p.OSBuild || !b.Known() {
			t.Errorf("%s: OSBuild() = %v, %v", tc.name, b, err)
		}
		if snap := h.Snapshot(); snap.OSBuild != p.OSBuild || !reflect.DeepEqual(snap.OSBugs, p.Bugs) {
			t.Errorf("%s: snapshot OS build %v bugs %v", tc.name, snap.OSBuild, snap.OSBugs)
		}
	}
	if _, err := ProfileByName("ws2016"); err == nil {
		t.Error("unknown profile accepted")
	}
	all := Profiles()
	if len(all) != len(profiles) || all[0].Name != ProfileWS2019 || all[len(all)-1].Name != ProfileWS2025 {
		t.Errorf("Profiles() = %+v", all)
	}
}

func TestDefaultProfileIsWS2022(t *testing.T) {
	if got := New(Options{}).Profile(); got.Name != ProfileWS2022 {
		t.Errorf("default profile %+v", got)
	}
	custom := Profile{Name: "custom", Version: hnslb.Version{Major: 12, Minor: 0}}
	if got := New(Options{Profile: custom}).Profile(); !reflect.DeepEqual(got, custom) {
		t.Errorf("custom profile replaced: %+v", got)
	}
}

func TestGeneratedIDs(t *testing.T) {
	a, b := &idSource{Seed: 1}, &idSource{Seed: 1}
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := a.guid()
		if !hnslb.IsGUID(id) || id != strings.ToLower(id) || id[14] != '4' {
			t.Fatalf("id %q is not a lowercase v4 GUID", id)
		}
		if seen[id] {
			t.Fatalf("id %q repeated", id)
		}
		seen[id] = true
		if id != b.guid() {
			t.Fatal("same seed, different IDs")
		}
	}
	if c := (&idSource{Seed: 2}); c.guid() == (&idSource{Seed: 1}).guid() {
		t.Error("different seeds, same first ID")
	}
	if m := a.mac(); !macPattern.MatchString(m) {
		t.Errorf("mac %q", m)
	}
}
