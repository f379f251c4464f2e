package metrics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os/exec"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/logs"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/internal/prometheustest"
)

// startServer serves s on 127.0.0.1 and returns its base URL.
func startServer(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	return request(t, http.MethodGet, url, "")
}

// touchAll gives every vector a child so that it appears in a scrape.
func touchAll() {
	for _, l := range []string{"IPv4", "IPv6"} {
		SyncProxyRulesLatency.WithLabelValues(l).Observe(0.02)
		SyncFullProxyRulesLatency.WithLabelValues(l).Observe(0.5)
		SyncPartialProxyRulesLatency.WithLabelValues(l).Observe(0.01)
		SyncProxyRulesLastTimestamp.WithLabelValues(l).SetToCurrentTime()
		SyncProxyRulesLastQueuedTimestamp.WithLabelValues(l).SetToCurrentTime()
		NetworkProgrammingLatency.WithLabelValues(l).Observe(1.5)
		SyncProxyRulesNoLocalEndpointsTotal.WithLabelValues("internal", l).Set(0)
		SyncProxyRulesNoLocalEndpointsTotal.WithLabelValues("external", l).Set(1)
	}
	EndpointChangesPending.Set(0)
	EndpointChangesTotal.Inc()
	ServiceChangesPending.Set(0)
	ServiceChangesTotal.Inc()
	ProxyHealthzTotal.WithLabelValues("200").Inc()
	ProxyLivezTotal.WithLabelValues("503").Inc()
	HNSOperationsTotal.WithLabelValues("create_load_balancer", ResultSuccess).Inc()
	HNSOperationDuration.WithLabelValues("create_load_balancer").Observe(0.003)
	Objects.WithLabelValues(KindLoadBalancer, StateDesired).Set(3)
	DriftRepairsTotal.WithLabelValues(KindLoadBalancer).Inc()
	HNSDeletesKeptTotal.WithLabelValues(KindRemoteEndpoint).Inc()
	BackendsTruncated.Set(0)
	NodeCauseServices.WithLabelValues("TopologyHintsIgnored", "Normal").Set(30)
	ForeignFrontendConflicts.Set(0)
	EndpointsDroppedMixedPorts.Set(0)
	HNSFeatureEnabled.WithLabelValues("DSR").Set(1)
	HNSInfo.WithLabelValues("13.2").Set(1)
	BuildInfo.WithLabelValues("v0.1.0").Set(1)
	OSBugWorkaround.WithLabelValues("overlay-nodeport-remote-backend").Set(1)
	SetBackendCap(64, BackendCapLearned)
	StateFileWriteFailuresTotal.Inc()
	StateFileSyncDuration.Observe(0.0004)
	HNSCallTimeoutsTotal.WithLabelValues("create_load_balancer").Inc()
	ConfigFileRejected.Set(1)
	WinKernelLBCreateFailure.WithLabelValues("IPv4", LBTypeClusterIP, "port_already_exists").Inc()
	WinKernelLBUpdateFailure.WithLabelValues("IPv4", LBTypeNodePort, "other").Inc()
	WinKernelLBDeleteFailure.WithLabelValues("IPv6", LBTypeHealthCheck, "other").Inc()
}

// wantFamilies are the scraped names, types and label names hnsproxy promises.
var wantFamilies = map[string]struct {
	typ    dto.MetricType
	labels string
}{
	"kubeproxy_sync_proxy_rules_duration_seconds":                   {dto.MetricType_HISTOGRAM, "ip_family"},
	"kubeproxy_sync_full_proxy_rules_duration_seconds":              {dto.MetricType_HISTOGRAM, "ip_family"},
	"kubeproxy_sync_partial_proxy_rules_duration_seconds":           {dto.MetricType_HISTOGRAM, "ip_family"},
	"kubeproxy_sync_proxy_rules_last_timestamp_seconds":             {dto.MetricType_GAUGE, "ip_family"},
	"kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds":      {dto.MetricType_GAUGE, "ip_family"},
	"kubeproxy_network_programming_duration_seconds":                {dto.MetricType_HISTOGRAM, "ip_family"},
	"kubeproxy_sync_proxy_rules_endpoint_changes_pending":           {dto.MetricType_GAUGE, ""},
	"kubeproxy_sync_proxy_rules_endpoint_changes_total":             {dto.MetricType_COUNTER, ""},
	"kubeproxy_sync_proxy_rules_service_changes_pending":            {dto.MetricType_GAUGE, ""},
	"kubeproxy_sync_proxy_rules_service_changes_total":              {dto.MetricType_COUNTER, ""},
	"kubeproxy_proxy_healthz_total":                                 {dto.MetricType_COUNTER, "code"},
	"kubeproxy_proxy_livez_total":                                   {dto.MetricType_COUNTER, "code"},
	"kubeproxy_sync_proxy_rules_no_local_endpoints_total":           {dto.MetricType_GAUGE, "ip_family,traffic_policy"},
	"kubeproxy_sync_proxy_rules_winkernel_lb_create_failures_total": {dto.MetricType_COUNTER, "error,ip_family,lb_type"},
	"kubeproxy_sync_proxy_rules_winkernel_lb_update_failures_total": {dto.MetricType_COUNTER, "error,ip_family,lb_type"},
	"kubeproxy_sync_proxy_rules_winkernel_lb_delete_failures_total": {dto.MetricType_COUNTER, "error,ip_family,lb_type"},
	"hnsproxy_hns_operations_total":                                 {dto.MetricType_COUNTER, "operation,result"},
	"hnsproxy_hns_operation_duration_seconds":                       {dto.MetricType_HISTOGRAM, "operation"},
	"hnsproxy_objects":                          {dto.MetricType_GAUGE, "kind,state"},
	"hnsproxy_drift_repairs_total":              {dto.MetricType_COUNTER, "kind"},
	"hnsproxy_hns_deletes_kept_total":           {dto.MetricType_COUNTER, "kind"},
	"hnsproxy_backends_truncated":               {dto.MetricType_GAUGE, ""},
	"hnsproxy_foreign_frontend_conflicts":       {dto.MetricType_GAUGE, ""},
	"hnsproxy_endpoints_dropped_mixed_ports":    {dto.MetricType_GAUGE, ""},
	"hnsproxy_hns_feature_enabled":              {dto.MetricType_GAUGE, "feature"},
	"hnsproxy_hns_info":                         {dto.MetricType_GAUGE, "version"},
	"hnsproxy_build_info":                       {dto.MetricType_GAUGE, "version"},
	"hnsproxy_os_bug_workaround":                {dto.MetricType_GAUGE, "bug"},
	"hnsproxy_backend_cap":                      {dto.MetricType_GAUGE, "source"},
	"hnsproxy_node_cause_services":              {dto.MetricType_GAUGE, "reason,type"},
	"hnsproxy_state_file_write_failures_total":  {dto.MetricType_COUNTER, ""},
	"hnsproxy_state_file_sync_duration_seconds": {dto.MetricType_HISTOGRAM, ""},
	"hnsproxy_hns_call_timeouts_total":          {dto.MetricType_COUNTER, "operation"},
	"hnsproxy_config_file_rejected":             {dto.MetricType_GAUGE, ""},
}

func TestScrapeNamesAndPromtool(t *testing.T) {
	Register()
	touchAll()
	base := startServer(t, NewServer(ServerOptions{ProxyMode: "kernelspace"}))
	code, body := get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	families, err := testutil.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing the scrape: %v", err)
	}
	for name, want := range wantFamilies {
		mf, ok := families[name]
		if !ok {
			t.Errorf("%s missing from the scrape", name)
			continue
		}
		if mf.GetType() != want.typ {
			t.Errorf("%s is a %v, want %v", name, mf.GetType(), want.typ)
		}
		var labels []string
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			labels = append(labels, lp.GetName())
		}
		sort.Strings(labels)
		if got := strings.Join(labels, ","); got != want.labels {
			t.Errorf("%s labels = %q, want %q", name, got, want.labels)
		}
	}
	// kube-proxy's help texts carry the stability level.
	if !strings.Contains(body, "# HELP kubeproxy_sync_proxy_rules_duration_seconds [ALPHA] SyncProxyRules latency in seconds") {
		t.Error("kube-proxy's help text for kubeproxy_sync_proxy_rules_duration_seconds is missing")
	}
	// kube-proxy's sync buckets: 0.001 doubling, 15 of them.
	if !strings.Contains(body, `kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family="IPv4",le="16.384"}`) {
		t.Error("kubeproxy_sync_proxy_rules_duration_seconds does not have kube-proxy's buckets")
	}
	// kube-proxy's network programming buckets, and 0.5ms doubling for HNS
	// calls: each one's first and last, and 59s where two ranges meet
	// (audit M04, M12).
	for _, bucket := range []string{
		`kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv4",le="0.25"}`,
		`kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv4",le="59"}`,
		`kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv4",le="60"}`,
		`kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv4",le="300"}`,
		`hnsproxy_hns_operation_duration_seconds_bucket{operation="create_load_balancer",le="0.0005"}`,
		`hnsproxy_hns_operation_duration_seconds_bucket{operation="create_load_balancer",le="16.384"}`,
	} {
		if !strings.Contains(body, bucket) {
			t.Errorf("the scrape has no %s", bucket)
		}
	}
	runPromtool(t, body)
}

// knownPromtoolFindings are lint findings inherited from kube-proxy's names.
var knownPromtoolFindings = []string{
	`kubeproxy_sync_proxy_rules_no_local_endpoints_total non-counter metrics should not have "_total" suffix`,
}

// promtool is the path of the promtool of the Prometheus release go.mod
// requires, built (or reused) by hack/build-prometheus.sh. A build that fails
// fails the test: the checks it runs are never skipped.
func promtool(t *testing.T) string {
	t.Helper()
	path, err := prometheustest.Promtool()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func runPromtool(t *testing.T, scrape string) {
	t.Helper()
	cmd := exec.Command(promtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader(scrape)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	var problems []string
	seenKnown := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		line = strings.TrimSpace(line)
		known := line == ""
		for _, k := range knownPromtoolFindings {
			if line == k {
				known = true
				seenKnown++
			}
		}
		if !known {
			problems = append(problems, line)
		}
	}
	// The inherited finding proves promtool linted this scrape.
	if seenKnown != len(knownPromtoolFindings) {
		t.Errorf("promtool did not report the known findings %q; output:\n%s", knownPromtoolFindings, out.String())
	}
	if len(problems) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", runErr, strings.Join(problems, "\n"))
	}
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		t.Fatalf("running promtool: %v", runErr)
	}
}

func TestServerEndpoints(t *testing.T) {
	Register()
	s := NewServer(ServerOptions{ProxyMode: "kernelspace", EnableDebug: true, Configz: map[string]string{"mode": "kernelspace"}})
	base := startServer(t, s)

	if code, body := get(t, base+"/proxyMode"); code != 200 || body != "kernelspace" {
		t.Errorf("/proxyMode = %d %q", code, body)
	}
	// kube-proxy's serveMetrics installs apiserver's healthz handler.
	for _, path := range []string{"/healthz", "/healthz/ping"} {
		if code, body := get(t, base+path); code != 200 || body != "ok" {
			t.Errorf("%s = %d %q", path, code, body)
		}
	}
	if code, body := get(t, base+"/configz"); code != 200 || !strings.Contains(body, `"kubeproxy.config.k8s.io"`) {
		t.Errorf("/configz = %d %q", code, body)
	}
	if code, body := get(t, base+"/debug/hns"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not started") {
		t.Errorf("/debug/hns before the proxier = %d %q", code, body)
	}
	type lbView struct {
		Service, ID, Status string
	}
	s.SetDebugSource(func(context.Context) (any, error) {
		return []lbView{{Service: "default/web:http", ID: "5f1c", Status: "done"}}, nil
	})
	if code, body := get(t, base+"/debug/hns"); code != 200 || !strings.Contains(body, `"ID": "5f1c"`) {
		t.Errorf("/debug/hns = %d %q", code, body)
	}
	s.SetDebugSource(func(context.Context) (any, error) { return nil, errors.New("reconciler busy") })
	if code, body := get(t, base+"/debug/hns"); code != 500 || !strings.Contains(body, "reconciler busy") {
		t.Errorf("/debug/hns on error = %d %q", code, body)
	}
	if code, _ := get(t, base+"/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("/debug/pprof/ without --profiling = %d", code)
	}
	if code, _ := request(t, http.MethodPut, base+"/debug/flags/v", "4"); code != http.StatusNotFound {
		t.Errorf("PUT /debug/flags/v without --profiling = %d", code)
	}
}

// With --profiling, PUT /debug/flags/v sets the log verbosity at run time,
// with kube-proxy's answers (routes.DebugFlags over logs.GlogSetter).
func TestDebugFlagsSetVerbosity(t *testing.T) {
	base := startServer(t, NewServer(ServerOptions{ProxyMode: "kernelspace", EnableProfiling: true}))
	t.Cleanup(func() { _, _ = logs.GlogSetter("0") })
	if code, body := request(t, http.MethodPut, base+"/debug/flags/v", "4"); code != http.StatusOK || !strings.Contains(body, "verbosity to 4") || !klog.V(4).Enabled() {
		t.Errorf("PUT 4 = %d %q, V(4) enabled %v", code, body, klog.V(4).Enabled())
	}
	for _, c := range []struct {
		method, body string
		code         int
	}{
		{http.MethodGet, "", http.StatusNotAcceptable},
		{http.MethodPut, "loud", http.StatusBadRequest},
		{http.MethodPut, "-1", http.StatusBadRequest},
		{http.MethodPut, strings.Repeat("9", 1<<20), http.StatusBadRequest},
		{http.MethodPut, strings.Repeat("0", maxVerbosityBody-1) + "4", http.StatusOK}, // at the bound (audit M14)
	} {
		if code, body := request(t, c.method, base+"/debug/flags/v", c.body); code != c.code {
			t.Errorf("%s %.20q = %d %q, want %d", c.method, c.body, code, body, c.code)
		}
	}
	if !klog.V(4).Enabled() || klog.V(5).Enabled() {
		t.Error("a refused request changed the verbosity")
	}
}

func request(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(out)
}

func TestDebugEndpointOffUnlessEnabled(t *testing.T) {
	Register()
	s := NewServer(ServerOptions{ProxyMode: "kernelspace", EnableProfiling: true})
	s.SetDebugSource(func(context.Context) (any, error) { return "secret", nil })
	base := startServer(t, s)
	if code, _ := get(t, base+"/debug/hns"); code != http.StatusNotFound {
		t.Errorf("/debug/hns when disabled = %d", code)
	}
	if code, _ := get(t, base+"/debug/pprof/"); code != http.StatusOK {
		t.Errorf("/debug/pprof/ with profiling = %d", code)
	}
}

// TestBackendCapHasOneSource: the cap in force has one source; a new one
// replaces the last rather than stand beside it (audit M13).
func TestBackendCapHasOneSource(t *testing.T) {
	Register()
	t.Cleanup(func() { SetBackendCap(64, BackendCapLearned) })
	SetBackendCap(512, BackendCapFromOSBuild)
	SetBackendCap(64, BackendCapLearned)
	if v, err := testutil.GetGaugeMetricValue(BackendCap.WithLabelValues(BackendCapFromOSBuild)); err != nil || v != 0 {
		t.Errorf("hnsproxy_backend_cap{source=%q} = %v, %v after the cap was learned; want 0", BackendCapFromOSBuild, v, err)
	}
}
