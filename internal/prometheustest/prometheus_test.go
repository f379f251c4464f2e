package prometheustest

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/internal/buildscript"
)

// TestPrometheusIsTheReleaseGoModRequires: the prometheus and promtool the
// tests run are the release of the github.com/prometheus/prometheus module
// go.mod requires, read off their --version: the
// module's v0.MMPP.Q is Prometheus M.PP.Q (v0.316.0 is 3.16.0).
func TestPrometheusIsTheReleaseGoModRequires(t *testing.T) {
	root, err := buildscript.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	list := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/prometheus/prometheus")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -m github.com/prometheus/prometheus: %v", err)
	}
	modVersion := strings.TrimSpace(string(out))
	m := regexp.MustCompile(`^v0\.(\d+)\.(\d+)$`).FindStringSubmatch(modVersion)
	if m == nil {
		t.Fatalf("github.com/prometheus/prometheus %q: not a v0.MMPP.Q release", modVersion)
	}
	mmpp, _ := strconv.Atoi(m[1])
	want := "version " + strconv.Itoa(mmpp/100) + "." + strconv.Itoa(mmpp%100) + "." + m[2] + " "

	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{filepath.Join(dir, "prometheus"), filepath.Join(dir, "promtool")} {
		out, err := exec.Command(bin, "--version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s --version: %v\n%s", bin, err, out)
		}
		if first, _, _ := strings.Cut(string(out), "\n"); !strings.Contains(first, want) {
			t.Errorf("%s --version says %q, want %q (%s)", bin, first, strings.TrimSpace(want), modVersion)
		}
	}
}
