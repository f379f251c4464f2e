package nearestrank

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i))
	}
	for q, want := range map[float64]time.Duration{50: 50, 99: 99, 100: 100, 0: 1} {
		if got := Percentile(ds, q); got != want {
			t.Errorf("p%v = %d, want %d", q, got, want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("percentile of nothing is not 0")
	}
	// Nearest rank rounds the rank up: p70 of 6 samples is the 5th.
	six := []time.Duration{1, 2, 3, 4, 5, 6}
	if got := Percentile(six, 70); got != 5 {
		t.Errorf("p70 of 1..6 = %d, want 5", got)
	}
}
