package reconciler

import "testing"

func TestSameMACAcrossSpellings(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"00-15-5D-AA-BB-01", "00:15:5d:aa:bb:01", true},
		{"02-11-0a-f4-01-06", "02-11-0A-F4-01-06", true},
		{"02-11-0a-f4-01-06", "02-11-0a-f4-01-07", false},
		{"02-11-0a-f4-01-06", "02-11-0a-f4-01-0", false},
		{"02-11-0a-f4-01-06", "02:11-0a-f4-01-06", true},
		{"02-11-0a-f4-01-06", "02-11-0a-f4-01-06", true},
		{"", "", true},
	} {
		if got := sameMAC(tc.a, tc.b); got != tc.same {
			t.Errorf("sameMAC(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
