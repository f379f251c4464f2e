//go:build linux

package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const prometheusReadyWait = 2 * time.Minute

// Prometheus is a real Prometheus server (the Debian package's binary)
// scraping every node's hnsproxy /metrics on 127.0.0.1.
type Prometheus struct {
	Port int
	proc *process
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
// starts prometheus (from PATH, or PROMETHEUS_BIN) on a free 127.0.0.1
// port with its TSDB in dir.
func StartPrometheus(ctx context.Context, c *Cluster, dir string) (*Prometheus, error) {
	bin := os.Getenv("PROMETHEUS_BIN")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("prometheus"); err != nil {
			return nil, fmt.Errorf("prometheus is not installed (apt-get install prometheus, or set PROMETHEUS_BIN): %w", err)
		}
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
	proc, err := startProcess("prometheus", bin, []string{
		"--config.file=" + config,
		"--storage.tsdb.path=" + filepath.Join(dir, "tsdb"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
		"--log.level=warn",
	}, nil, filepath.Join(dir, "prometheus.log"), false)
	if err != nil {
		return nil, err
	}
	p := &Prometheus{Port: port, proc: proc}
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

// Sample is one series of an instant query's result.
type Sample struct {
	Labels map[string]string
	Value  string
	Time   float64
}

// Query runs an instant PromQL query through the HTTP API.
func (p *Prometheus) Query(ctx context.Context, query string) ([]Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url("/api/v1/query?query="+url.QueryEscape(query)), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query %q: %s: %w", query, resp.Status, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %q: %s", query, r.Error)
	}
	var out []Sample
	for _, s := range r.Data.Result {
		ts, _ := s.Value[0].(float64)
		v, _ := s.Value[1].(string)
		out = append(out, Sample{Labels: s.Metric, Time: ts, Value: v})
	}
	return out, nil
}
