//go:build linux && benche2e

package main

import (
	"fmt"
	"math"
	"net/http"
	"slices"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const programmingMetric = "kubeproxy_network_programming_duration_seconds"

// buckets are a histogram's cumulative counts by upper bound, summed over
// its label sets (ip_family).
type buckets map[float64]float64

// scrape reads a loopback /metrics endpoint.
func scrape(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	return families, nil
}

// scrapeBuckets reads metric's buckets from a loopback /metrics endpoint.
func scrapeBuckets(url, metric string) (buckets, error) {
	families, err := scrape(url)
	if err != nil {
		return nil, err
	}
	out := buckets{}
	for _, m := range families[metric].GetMetric() {
		for _, b := range m.GetHistogram().GetBucket() {
			out[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
	}
	return out, nil
}

// heapGoalMiB is the Go runtime's heap goal (go_memstats_next_gc_bytes):
// with GOGC=100 twice the heap that was live after the last collection,
// which is where the RSS of a Go process settles.
func heapGoalMiB(url string) (float64, error) {
	families, err := scrape(url)
	if err != nil {
		return 0, err
	}
	const metric = "go_memstats_next_gc_bytes"
	f, ok := families[metric]
	if !ok || len(f.GetMetric()) == 0 {
		return 0, fmt.Errorf("%s: no %s", url, metric)
	}
	return f.GetMetric()[0].GetGauge().GetValue() / (1 << 20), nil
}

// quantileBound is the upper bound of the bucket holding quantile q of the
// observations made between two scrapes (+Inf past the last bound), and how
// many observations there were.
func quantileBound(before, after buckets, q float64) (bound, observations float64) {
	bounds := make([]float64, 0, len(after))
	for b := range after {
		bounds = append(bounds, b)
	}
	slices.Sort(bounds)
	for _, b := range bounds {
		observations = max(observations, after[b]-before[b])
	}
	if observations == 0 {
		return math.NaN(), 0
	}
	for _, b := range bounds {
		if after[b]-before[b] >= q*observations {
			return b, observations
		}
	}
	return math.Inf(1), observations
}
