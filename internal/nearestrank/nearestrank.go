// Package nearestrank owns the one percentile the benchmark tools report
// (hack/scale, e2e/benche2e): the nearest-rank method, which always names a
// sample that was measured.
package nearestrank

import (
	"slices"
	"time"
)

// Percentile is the nearest-rank percentile q (0..100) of ds; 0 for none.
func Percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(q/100*float64(len(s))+0.999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}
