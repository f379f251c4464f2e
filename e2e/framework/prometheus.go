//go:build linux

package framework

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/hnsproxy/hnsproxy/internal/prometheustest"
)

const prometheusReadyWait = 2 * time.Minute

// Prometheus is a real Prometheus server (the release go.mod requires, built
// by hack/build-prometheus.sh) scraping every node's hnsproxy /metrics on
// 127.0.0.1.
type Prometheus struct {
	Port int
	proc *process
	api  promv1.API // client_golang's client of its HTTP API
}

// prometheusConfig scrapes each target every second, labelled by node.
func prometheusConfig(targets map[string]string) string {
	var b strings.Builder
	b.WriteString("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: hnsproxy\n    static_configs:\n")
	for node, target := range targets {
		fmt.Fprintf(&b, "      - targets: [%q]\n        labels: {node: %q}\n", target, node)
	}
	return b.String()
}

// StartPrometheus writes a config scraping every node's hnsproxy and
// starts prometheus (prometheustest.Server: the release go.mod requires, or
// PROMETHEUS_BIN) on a free 127.0.0.1 port with its TSDB in dir.
func StartPrometheus(ctx context.Context, c *Cluster, dir string) (*Prometheus, error) {
	bin, err := prometheustest.Server()
	if err != nil {
		return nil, err
	}
	targets := map[string]string{}
	for _, n := range c.Nodes {
		targets[n.Name()] = fmt.Sprintf("127.0.0.1:%d", n.Proxy.MetricsPort)
	}
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, []byte(prometheusConfig(targets)), 0o644); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &Prometheus{Port: port}
	client, err := promapi.NewClient(promapi.Config{Address: p.url("")})
	if err != nil {
		return nil, err
	}
	p.api = promv1.NewAPI(client)
	proc, err := startProcess("prometheus", bin, []string{
		"--config.file=" + config,
		"--storage.tsdb.path=" + filepath.Join(dir, "tsdb"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
		"--log.level=warn",
	}, nil, filepath.Join(dir, "prometheus.log"), false)
	if err != nil {
		return nil, err
	}
	p.proc = proc
	readyCtx, cancel := context.WithTimeout(ctx, prometheusReadyWait)
	defer cancel()
	if err := proc.waitReady(readyCtx, func(ctx context.Context) error {
		return httpGetOK(ctx, http.DefaultClient, p.url("/-/ready"), "")
	}); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Prometheus) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", p.Port, path)
}

// Stop stops prometheus.
func (p *Prometheus) Stop() error { return p.proc.stop(stopGrace) }

// Query runs an instant PromQL query through Prometheus's HTTP API with
// client_golang's API client. The result must be a vector (every query
// the tests and dashboards make is one); what Prometheus annotates the
// query with (warnings, and infos such as "metric might not be a
// counter") is returned beside it, for tests to hold a query to.
func (p *Prometheus) Query(ctx context.Context, query string) (model.Vector, []string, error) {
	value, warnings, infos, err := p.api.Query(ctx, query, time.Now())
	if err != nil {
		return nil, nil, fmt.Errorf("query %q: %w", query, err)
	}
	vector, ok := value.(model.Vector)
	if !ok {
		return nil, nil, fmt.Errorf("query %q: a %s result, want a vector", query, value.Type())
	}
	return vector, append(warnings, infos...), nil
}
