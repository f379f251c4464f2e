//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/internal/buildscript"
	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// TestDemo runs `make demo`'s program as CI would (DEMO_ONESHOT=1) and
// checks that what it prints is what the README promises.
func TestDemo(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := buildscript.Build("demo")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "demo")
	cmd := exec.Command(bin)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "DEMO_ONESHOT=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("demo: %v\n%s\n%s", err, out, stderr.String())
	}
	text := string(out)
	ws2022, ws2019, _ := strings.Cut(text, "Node win-ws2019")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^kube-system/kube-dns:dns +ClusterIP +10\.96\.0\.10:53/UDP->53 +DSR `),
		regexp.MustCompile(`(?m)^kube-system/kube-dns:dns-tcp +ClusterIP +10\.96\.0\.10:53/TCP->53 +DSR `),
		regexp.MustCompile(`(?m)^web/frontend:http +NodePort +\*:30080/TCP->8080 +local-routed-VIP VIP-external-IP client-IP-affinity SNAT-to-10\.244\.1\.2 `),
		regexp.MustCompile(`(?m)^web/ingress-nginx:https +LoadBalancer +203\.0\.113\.10:443/TCP->8443 +DSR VIP-external-IP `),
		regexp.MustCompile(`(?m)^batch/workers:grpc .* \.\.\. 80 in all$`),
	} {
		if !want.MatchString(ws2022) {
			t.Errorf("ws2022 table lacks %s", want)
		}
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^web/frontend:http +NodePort +\*:30080/TCP->8080 +local-routed-VIP VIP-external-IP SNAT-to-10\.244\.2\.2 `),
		regexp.MustCompile(`(?m)^batch/workers:grpc .* \.\.\. 64 in all$`),
	} {
		if !want.MatchString(ws2019) {
			t.Errorf("ws2019 table lacks %s", want)
		}
	}
	tables, traces, _ := strings.Cut(ws2019, "Packet traces")
	if strings.Contains(tables, "client-IP-affinity") || strings.Contains(tables, "LoadBalancer  203.0.113.10") {
		t.Errorf("ws2019 (HNS 9.5, no ingress pods) shows affinity or an ETP Local ingress load balancer:\n%s", tables)
	}
	for _, want := range []string{
		"=> dropped: no load balancer matched",
		"client IP preserved",
		"=> left the cluster towards 198.51.100.20:443; it sees 10.0.0.11:",
		"debug http://127.0.0.1:",
	} {
		if !strings.Contains(traces, want) && !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	// Either CoreDNS pod may answer; it must be one of them.
	if !regexp.MustCompile(`=> delivered to pod 10\.244\.[12]\.10:53 on win-ws20(22|19)`).MatchString(traces) {
		t.Errorf("the DNS trace did not reach a CoreDNS pod")
	}
	for _, line := range readmeDemoLines(t) {
		if !strings.Contains(shapeOf(text), shapeOf(line)) {
			t.Errorf("README.md's demo output shows %q; the demo prints no line of its shape", strings.TrimSpace(line))
		}
	}
	if t.Failed() {
		t.Logf("demo output:\n%s", text)
	}
}

// readmeDemoLines are the lines of README.md's "What `make demo` shows"
// excerpt up to "Where to look:" (whose command lines the README
// shortens), less the trim marks ("  ... (8 traces in all)").
func readmeDemoLines(t *testing.T) []string {
	t.Helper()
	section := doctest.Section(t, "README.md", "## What `make demo` shows")
	_, excerpt, ok := strings.Cut(section, "```\n")
	excerpt, _, closed := strings.Cut(excerpt, "Where to look:")
	if !ok || !closed {
		t.Fatal("README.md's demo section has no output excerpt ending in \"Where to look:\"")
	}
	lines := outputLines(excerpt)
	if len(lines) < 40 {
		t.Fatalf("read %d lines of README.md's demo excerpt; it no longer reads as the demo's output", len(lines))
	}
	return lines
}

// outputLines are the lines of a README excerpt of a program's output
// that show output: no blank lines, trim marks ("...", "... (8 traces in
// all)") or command lines ("$ ...").
func outputLines(excerpt string) []string {
	var lines []string
	for _, line := range strings.Split(excerpt, "\n") {
		if l := strings.TrimSpace(line); l != "" && l != "..." && !strings.HasPrefix(l, "... (") && !strings.HasPrefix(l, "$ ") {
			lines = append(lines, line)
		}
	}
	return lines
}

var (
	digits    = regexp.MustCompile(`[0-9]+`)
	bracketed = regexp.MustCompile(`\[[^\]]*\]`)
	spaces    = regexp.MustCompile(`[ \t]+`)
)

// shapeOf is text with what varies from run to run made alike: numbers
// (service IPs, ports, counts), what a trace step names in brackets (which
// backend a flow took) and the width of a table's columns. A README line
// of another shape is one the demo no longer prints.
func shapeOf(text string) string {
	text = digits.ReplaceAllString(text, "N")
	text = bracketed.ReplaceAllString(text, "[…]")
	return spaces.ReplaceAllString(text, " ")
}
