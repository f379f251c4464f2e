//go:build linux

package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// Tool names: the binaries a simulated Windows node runs.
const (
	HNSSimBin    = "hnssim"
	HNSCNIBin    = "hnscni"
	HNSProxyBin  = "hnsproxy"
	HostLocalBin = "host-local"
)

// toolPackages are built together by one `go build`, which shares the work
// between them and reuses the build cache.
var toolPackages = []string{
	"./cmd/hnssim",
	"./cmd/hnscni",
	"./cmd/hnsproxy",
	// The reference IPAM plugin, at the version go.mod pins.
	"github.com/containernetworking/plugins/plugins/ipam/host-local",
}

var tools struct {
	once sync.Once
	dir  string
	err  error
}

// Tools builds hnssim, hnscni, hnsproxy and host-local into
// _output/bin (once per process) and returns that folder. HNSPROXY_TOOLS_DIR
// names a folder of prebuilt binaries instead.
func Tools() (string, error) {
	tools.once.Do(func() { tools.dir, tools.err = buildTools() })
	return tools.dir, tools.err
}

func buildTools() (string, error) {
	if dir := os.Getenv("HNSPROXY_TOOLS_DIR"); dir != "" {
		return dir, checkTools(dir)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "_output", "bin")
	fmt.Fprintf(os.Stderr, "building hnssim, hnscni, hnsproxy and host-local into %s (packages listed as they compile)\n", dir)
	// -v names each package as it compiles: progress on a cold cache,
	// silence on a warm one.
	cmd := exec.Command("go", append([]string{"build", "-v", "-o", dir + string(filepath.Separator)}, toolPackages...)...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the node binaries: %w", err)
	}
	return dir, checkTools(dir)
}

func checkTools(dir string) error {
	for _, name := range []string{HNSSimBin, HNSCNIBin, HNSProxyBin, HostLocalBin} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("node binaries: %w", err)
		}
	}
	return nil
}
