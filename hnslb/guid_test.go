package hnslb

import "testing"

func TestIsGUID(t *testing.T) {
	for s, want := range map[string]bool{
		"0b5e4c1e-0000-4000-8000-000000000000":   true,
		"0B5E4C1E-ABCD-4000-8000-00000000000F":   true,
		"{0b5e4c1e-0000-4000-8000-000000000000}": false, // hcn parses with guid.FromString: no braces
		"0b5e4c1e-0000-4000-8000-00000000000":    false,
		"0b5e4c1e00000-4000-8000-000000000000":   false,
		"0b5e4c1g-0000-4000-8000-000000000000":   false,
		"{0b5e4c1e-0000-4000-8000-000000000000":  false,
		"":                                       false,
	} {
		if IsGUID(s) != want {
			t.Errorf("IsGUID(%q) = %v", s, !want)
		}
	}
}
