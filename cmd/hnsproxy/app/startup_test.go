package app

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/nodeconfig"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/sim"
)

func simAt(major, minor int) *sim.HNS {
	return sim.New(sim.Options{Profile: sim.Profile{Name: "test", Version: hnslb.Version{Major: major, Minor: minor}}})
}

func config(mutate func(*options.Config)) *options.Config {
	c := &options.Config{Winkernel: options.Winkernel{NetworkName: "net"}}
	if mutate != nil {
		mutate(c)
	}
	return c
}

func TestCapabilities(t *testing.T) {
	metrics.Register()
	type unavailable struct{ feature, why string }
	cases := []struct {
		name        string
		hns         *sim.HNS
		cfg         *options.Config
		network     *hnslb.Network
		wantErr     string
		wantDSR     bool
		wantCap     int
		wantWarning *unavailable
	}{
		{name: "ws2022 with DSR", hns: simAt(13, 2), cfg: config(func(c *options.Config) { c.Winkernel.EnableDSR = true }), wantDSR: true, wantCap: 1024},
		{name: "ws2019 default cap", hns: simAt(9, 5), cfg: config(nil), wantCap: 64},
		{name: "cap override", hns: simAt(9, 5), cfg: config(func(c *options.Config) { c.HNS.MaxBackendsPerLB = 200 }), wantCap: 200},
		{
			name: "DSR asked for but missing", hns: simAt(10, 1), cfg: config(func(c *options.Config) { c.Winkernel.EnableDSR = true }),
			wantCap: 64, wantWarning: &unavailable{"DSR (--enable-dsr)", "needs HNS 9.3-9.x or >= 10.2, have 10.1"},
		},
		{name: "no v2 API", hns: simAt(9, 1), cfg: config(nil), wantErr: "needs the HNS v2 API"},
		{
			name: "overlay without source VIP", hns: simAt(13, 2), cfg: config(nil),
			network: &hnslb.Network{Name: "vxlan0", Type: hnslb.NetworkTypeOverlay}, wantErr: "set --source-vip",
		},
		{
			// HNS overlay carries no IPv6: such a source VIP would leave the
			// IPv4 load balancers without one (kube-proxy only logs a warning).
			name: "overlay with an IPv6 source VIP", hns: simAt(13, 2), cfg: config(func(c *options.Config) { c.Winkernel.SourceVIP = "fd00:244:1::2" }),
			network: &hnslb.Network{Name: "vxlan0", Type: hnslb.NetworkTypeOverlay}, wantErr: "--source-vip fd00:244:1::2 is IPv6",
		},
		{
			name: "overlay", hns: simAt(13, 2), cfg: config(func(c *options.Config) { c.Winkernel.SourceVIP = "10.244.1.2" }),
			network: &hnslb.Network{Name: "vxlan0", Type: hnslb.NetworkTypeOverlay}, wantCap: 1024,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got *unavailable
			caps, err := checkCapabilities(context.Background(), c.hns, c.cfg, c.network, capabilityEvents{featureUnavailable: func(f, why string) { got = &unavailable{f, why} }})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if caps.DSR != c.wantDSR || caps.Features.MaxBackends != c.wantCap {
				t.Errorf("DSR %v cap %d, want %v %d", caps.DSR, caps.Features.MaxBackends, c.wantDSR, c.wantCap)
			}
			if (got == nil) != (c.wantWarning == nil) || (got != nil && *got != *c.wantWarning) {
				t.Errorf("feature warning = %+v, want %+v", got, c.wantWarning)
			}
		})
	}
}

// lateNetwork creates the network on the nth lookup, as a CNI starting after hnsproxy would.
type lateNetwork struct {
	*sim.HNS
	name    string
	lookups int
	createN int
}

func (l *lateNetwork) GetNetworkByName(ctx context.Context, name string) (*hnslb.Network, error) {
	l.lookups++
	if l.lookups == l.createN {
		if _, err := l.HNS.CreateNetwork(ctx, &hnslb.Network{Name: l.name, Type: hnslb.NetworkTypeL2Bridge}); err != nil {
			return nil, err
		}
	}
	return l.HNS.GetNetworkByName(ctx, name)
}

// Found by the fault soak: one transient failure of the version call
// ended hnsproxy at start.
func TestReadVersionRetriesTransientFailures(t *testing.T) {
	hns := simAt(13, 2)
	hns.Restart(200 * time.Millisecond)
	v, err := readVersion(context.Background(), hns, 10*time.Millisecond, time.Hour, time.Minute)
	if err != nil || v != (hnslb.Version{Major: 13, Minor: 2}) {
		t.Errorf("version %v, err %v, want 13.2 once HNS is back", v, err)
	}
	hns.Restart(time.Hour)
	if _, err := readVersion(context.Background(), hns, 10*time.Millisecond, time.Hour, 50*time.Millisecond); !hnslb.IsUnavailable(err) {
		t.Errorf("HNS down past the timeout: %v, want it unavailable", err)
	}
}

// versionRefusedFirst answers the first n version reads with 0x57.
type versionRefusedFirst struct {
	*sim.HNS
	n int
}

func (v *versionRefusedFirst) Version(ctx context.Context) (hnslb.Version, error) {
	if v.n > 0 {
		v.n--
		return hnslb.Version{}, &hnslb.Error{Op: "Version", Code: hnslb.CodeInvalidParameter, Message: "The parameter is incorrect."}
	}
	return v.HNS.Version(ctx)
}

// Any code HNS answers a version read with is retried, not only
// "unavailable": the read has no input of ours to refuse.
func TestReadVersionRetriesAnyCodeHNSAnswers(t *testing.T) {
	hns := &versionRefusedFirst{HNS: simAt(13, 2), n: 2}
	v, err := readVersion(context.Background(), hns, time.Millisecond, time.Hour, time.Minute)
	if err != nil || v != (hnslb.Version{Major: 13, Minor: 2}) || hns.n != 0 {
		t.Errorf("version %v, err %v after two refusals, want 13.2", v, err)
	}
	hns.n = 1 << 20
	_, err = readVersion(context.Background(), hns, time.Millisecond, time.Hour, 20*time.Millisecond)
	var coded *hnslb.Error
	if !errors.As(err, &coded) || coded.Code != hnslb.CodeInvalidParameter {
		t.Errorf("refused past the timeout: %v, want HNS's 0x57", err)
	}
}

// A version read HNS keeps refusing logs its first failure, then one line
// per logEvery, not one per poll.
func TestReadVersionLogsItsRetriesPaced(t *testing.T) {
	var lines []string
	logger := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	ctx := klog.NewContext(context.Background(), logger)
	hns := &versionRefusedFirst{HNS: simAt(13, 2), n: 50}
	if _, err := readVersion(ctx, hns, time.Microsecond, time.Hour, time.Minute); err != nil || hns.n != 0 {
		t.Fatalf("err %v with %d refusals left, want the version after 50", err, hns.n)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `"attempt"=1`) || !strings.Contains(lines[0], "0x57") {
		t.Errorf("logged %q, want the first refusal only", lines)
	}
	lines, hns.n = nil, 3
	if _, err := readVersion(ctx, hns, time.Microsecond, 0, time.Minute); err != nil || len(lines) != 3 {
		t.Errorf("err %v, logged %d lines with logEvery 0, want one per refusal (3)", err, len(lines))
	}
}

func TestWaitForNetwork(t *testing.T) {
	hns := &lateNetwork{HNS: simAt(13, 2), name: "cbr0", createN: 4}
	n, err := waitForNetwork(context.Background(), hns, "cbr0", time.Millisecond, time.Millisecond, time.Hour, nil)
	if err != nil || n.Name != "cbr0" || hns.lookups != 4 {
		t.Fatalf("network %+v, err %v after %d lookups", n, err, hns.lookups)
	}

	_, err = waitForNetwork(context.Background(), simAt(13, 2), "missing", time.Millisecond, time.Millisecond, 20*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), `HNS network "missing" did not appear`) || !strings.Contains(err.Error(), "no network by that name yet") || !hnslb.IsNotFound(err) {
		t.Errorf("timeout error = %v", err)
	}

	// An overlay network found before HNS gave it its provider address is
	// waited for; past the timeout the error says what it lacked.
	unready := simAt(13, 2)
	if _, err := unready.CreateNetwork(context.Background(), &hnslb.Network{Name: "vxlan0", Type: hnslb.NetworkTypeOverlay}); err != nil {
		t.Fatal(err)
	}
	usable := func(n *hnslb.Network) error { return nodeconfig.Usable(n, false) }
	_, err = waitForNetwork(context.Background(), unready, "vxlan0", time.Millisecond, time.Millisecond, 20*time.Millisecond, usable)
	if err == nil || !strings.Contains(err.Error(), `HNS network "vxlan0" was not usable`) || !strings.Contains(err.Error(), "no provider address") || !strings.Contains(err.Error(), "management IP") {
		t.Errorf("timeout on an overlay network without a provider address = %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := waitForNetwork(ctx, simAt(13, 2), "missing", time.Millisecond, time.Millisecond, time.Hour, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait = %v", err)
	}
}

func TestSeedSimNetwork(t *testing.T) {
	ctx := context.Background()
	hns := simAt(13, 2)
	if err := seedSimNetwork(ctx, hns, options.Winkernel{NetworkName: "vxlan0", SourceVIP: "10.0.0.2"}); err != nil {
		t.Fatal(err)
	}
	if err := seedSimNetwork(ctx, hns, options.Winkernel{NetworkName: "vxlan0", SourceVIP: "10.0.0.2"}); err != nil {
		t.Fatalf("seeding twice: %v", err)
	}
	n, err := hns.GetNetworkByName(ctx, "vxlan0")
	if err != nil || n.Type != hnslb.NetworkTypeOverlay {
		t.Fatalf("seeded %+v, %v", n, err)
	}
	// As HNS gives an overlay network a provider address, which the start waits for.
	if err := nodeconfig.Usable(n, false); err != nil {
		t.Errorf("the seeded overlay network is not usable: %v", err)
	}
	nets, _ := hns.ListNetworks(ctx)
	if len(nets) != 1 {
		t.Errorf("%d networks after seeding twice", len(nets))
	}
}

// TestCapabilitiesWorkAroundOSBugs: on Windows Server 2022 with KB5005619
// and l2bridge, --enable-dsr gives no DSR by default; the bug is told (the
// Node event) and exported (the metric, /debug/hns's osBugs).
// --os-bug-workarounds=none keeps DSR and still tells the bug, with the
// metric at 0 and osBugs saying it is not worked around.
func TestCapabilitiesWorkAroundOSBugs(t *testing.T) {
	metrics.Register()
	p, err := sim.ProfileByName(sim.ProfileWS2022KB)
	if err != nil {
		t.Fatal(err)
	}
	l2bridge := &hnslb.Network{Name: "net", Type: hnslb.NetworkTypeL2Bridge}
	for _, c := range []struct {
		workarounds string
		wantDSR     bool
		wantMetric  float64
	}{{"", false, 1}, {options.OSBugWorkaroundsNone, true, 0}} {
		var told []string
		cfg := config(func(cfg *options.Config) { cfg.Winkernel.EnableDSR, cfg.HNS.OSBugWorkarounds = true, c.workarounds })
		caps, err := checkCapabilities(context.Background(), sim.New(sim.Options{Profile: p}), cfg, l2bridge,
			capabilityEvents{osBug: func(bug, what string) { told = append(told, bug) }})
		if err != nil {
			t.Fatal(err)
		}
		bug := string(hnslb.BugL2BridgeDSRPodToService)
		if caps.DSR != c.wantDSR || len(told) != 1 || told[0] != bug {
			t.Errorf("workarounds %q: DSR %v, told %v; want DSR %v and %s told", c.workarounds, caps.DSR, told, c.wantDSR, bug)
		}
		if got, err := testutil.GetGaugeMetricValue(metrics.OSBugWorkaround.WithLabelValues(bug)); err != nil || got != c.wantMetric {
			t.Errorf("workarounds %q: hnsproxy_os_bug_workaround %v, want %v", c.workarounds, got, c.wantMetric)
		}
		v := viewOf(t, debugSource(cfg, &Deps{Network: l2bridge, Capabilities: caps}, statuses{}))
		if worked, listed := v.OSBugs[bug]; !listed || worked != (c.wantMetric == 1) {
			t.Errorf("workarounds %q: /debug/hns osBugs %v, want %s worked around: %v", c.workarounds, v.OSBugs, bug, c.wantMetric == 1)
		}
	}
}

// TestIPv6FeatureFollowsTheNetwork: hnsproxy_hns_feature_enabled says
// which capabilities are in use, and on an overlay network IPv6 is not,
// whatever HNS's version (HNS overlay carries no IPv6; kube-proxy falls
// back to single-stack there), so the start-up line and the metric say off.
func TestIPv6FeatureFollowsTheNetwork(t *testing.T) {
	metrics.Register()
	for _, c := range []struct {
		network *hnslb.Network
		want    float64
	}{
		{&hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge}, 1},
		{&hnslb.Network{Name: "vxlan0", Type: hnslb.NetworkTypeOverlay}, 0},
	} {
		cfg := config(func(c *options.Config) { c.Winkernel.SourceVIP = "10.244.1.2" })
		if _, err := checkCapabilities(context.Background(), simAt(13, 2), cfg, c.network, capabilityEvents{}); err != nil {
			t.Fatal(err)
		}
		if got := must(testutil.GetGaugeMetricValue(metrics.HNSFeatureEnabled.WithLabelValues(featureIPv6))); got != c.want {
			t.Errorf("%s network on HNS 13.2: IPv6 feature metric %v, want %v", c.network.Type, got, c.want)
		}
	}
}
