package app

import (
	"context"
	"testing"

	"k8s.io/component-base/metrics/testutil"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// TestModifyLoadBalancerFlag: --hns-modify-load-balancer decides the
// modify feature over the HNS version both ways, in the capabilities the
// reconciler gets and in hnsproxy_hns_feature_enabled; the reconciler
// turning modify off at run time shows in the metric.
func TestModifyLoadBalancerFlag(t *testing.T) {
	metrics.Register()
	for _, c := range []struct {
		mode         reconciler.ModifyMode
		major, minor int
		want         bool
	}{
		{reconciler.ModifyAuto, 15, 5, true},
		{reconciler.ModifyAuto, 15, 4, false},
		{reconciler.ModifyAuto, 13, 2, false},
		{reconciler.ModifyDisabled, 15, 5, false},
		{reconciler.ModifyEnabled, 15, 4, true},
		{reconciler.ModifyEnabled, 9, 5, true},
	} {
		cfg := config(func(o *options.Config) { o.HNS.ModifyLoadBalancer = c.mode })
		caps, err := checkCapabilities(context.Background(), simAt(c.major, c.minor), cfg, nil, capabilityEvents{})
		if err != nil {
			t.Fatal(err)
		}
		gauge := must(testutil.GetGaugeMetricValue(metrics.HNSFeatureEnabled.WithLabelValues(featureModify)))
		if caps.Features.ModifyLoadBalancer != c.want || (gauge == 1) != c.want {
			t.Errorf("%s on HNS %d.%d: modify %v, metric %v; want %v", c.mode, c.major, c.minor, caps.Features.ModifyLoadBalancer, gauge, c.want)
		}
	}
	modifyTurnedOff()
	if gauge := must(testutil.GetGaugeMetricValue(metrics.HNSFeatureEnabled.WithLabelValues(featureModify))); gauge != 0 {
		t.Errorf("after the reconciler turned modify off the metric is %v", gauge)
	}
}

// TestRemoteEndpointNamesFeature: the names feature reads 0 after start-up
// checks (not known yet) and follows what the reconciler learns.
func TestRemoteEndpointNamesFeature(t *testing.T) {
	metrics.Register()
	if _, err := checkCapabilities(context.Background(), simAt(15, 5), config(nil), nil, capabilityEvents{}); err != nil {
		t.Fatal(err)
	}
	gauge := func() float64 {
		return must(testutil.GetGaugeMetricValue(metrics.HNSFeatureEnabled.WithLabelValues(featureEndpointNames)))
	}
	if g := gauge(); g != 0 {
		t.Errorf("at start-up the names feature reads %v, want 0", g)
	}
	remoteEndpointNames(true)
	if g := gauge(); g != 1 {
		t.Errorf("after names were seen kept it reads %v, want 1", g)
	}
	remoteEndpointNames(false)
	if g := gauge(); g != 0 {
		t.Errorf("after a reply without a name it reads %v, want 0", g)
	}
}
