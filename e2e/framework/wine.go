//go:build linux

package framework

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hnsproxy/hnsproxy/internal/buildscript"
)

// The Windows lane runs the release builds of hnsproxy.exe (and hnscni.exe)
// under Wine, in one private prefix per run (hack/wine-prefix.sh), reaching
// the node's hnssim through hcn and the HCN bridge DLLs in hack/wine.

// Environment switches of the Windows lane.
const (
	// EnvSkipWindowsLane set to 1 skips the lane on a developer's machine;
	// with CI set it is refused, as is a missing Wine.
	EnvSkipWindowsLane = "HNSPROXY_SKIP_WINDOWS_LANE"
	// envBridge is where the bridge DLLs find hnssim's bridge (hack/wine/hnsbridge.h).
	envBridge = "HNSPROXY_HNS_BRIDGE"
)

// Windows release binaries.
const (
	HNSProxyExe = "hnsproxy.exe"
	HNSCNIExe   = "hnscni.exe"
)

// errNoWine is hack/wine-prefix.sh's "wine or mingw-w64 is missing" (exit 3).
var errNoWine = errors.New("wine or mingw-w64 is not installed (hack/install-deps.sh installs them)")

// windowsBuilds is the Windows version each simulated profile plays, as the
// registry of a node of that build reports it: MAJOR.MINOR.BUILD.UBR.
var windowsBuilds = map[string]string{
	"ws2019":      "10.0.17763.6189",
	"ws2022":      "10.0.20348.2582",
	"ws2025-15.4": "10.0.26100.1742",
	"ws2025":      "10.0.26100.4061",
}

// wine is a prepared prefix: how to run a Windows binary on this machine.
type wine struct {
	loader string   // the wine64 loader
	env    []string // WINEPREFIX and the rest, KEY=VALUE
	build  string   // the Windows version its registry reports
}

// wineState is the one prefix of this process; its registry reports one
// Windows build at a time, so a cluster's Windows nodes share a profile.
var wineState struct {
	mu   sync.Mutex
	w    *wine
	exes string // folder of the Windows release binaries
}

// prepareWine builds the Windows release binaries (once per process) and
// readies the prefix for profile's Windows build.
func prepareWine(profile string) (*wine, string, error) {
	build, ok := windowsBuilds[profile]
	if !ok {
		return nil, "", fmt.Errorf("windows lane: no Windows build known for profile %q", profile)
	}
	wineState.mu.Lock()
	defer wineState.mu.Unlock()
	if wineState.exes == "" {
		// The release flags (RELEASE=1: -trimpath, stripped), as deploy/ builds them.
		dir, err := buildscript.BuildWith([]string{"GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0", "RELEASE=1"}, "hnsproxy", "hnscni")
		if err != nil {
			return nil, "", err
		}
		wineState.exes = dir
	}
	if wineState.w != nil && wineState.w.build == build {
		return wineState.w, wineState.exes, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, "", err
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "hack/wine-prefix.sh"), "--os-build", build)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, &out, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 {
			return nil, "", errNoWine
		}
		return nil, "", fmt.Errorf("hack/wine-prefix.sh: %w\n%s", err, stderr.String())
	}
	w := &wine{build: build}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if v, ok := strings.CutPrefix(line, "WINE="); ok {
			w.loader = v
		} else if strings.HasPrefix(line, "WINE") {
			w.env = append(w.env, line)
		}
	}
	if w.loader == "" {
		return nil, "", fmt.Errorf("hack/wine-prefix.sh named no wine loader:\n%s", out.String())
	}
	wineState.w = w
	return w, wineState.exes, nil
}

// command runs exe with args under Wine, with extra environment.
func (w *wine) command(exe string, args []string, extra ...string) (bin string, argv, env []string) {
	env = append(os.Environ(), "DISPLAY=", "WAYLAND_DISPLAY=")
	env = append(env, w.env...)
	return w.loader, append([]string{exe}, args...), append(env, extra...)
}

// windowsPath is a Linux path as a Windows program under Wine names it
// (Wine maps the Linux root to drive Z:).
func windowsPath(p string) string { return `Z:` + strings.ReplaceAll(p, "/", `\`) }

// windowsLaneSkip says why the lane may not run here, or "" when it must.
// With CI set it never skips.
func windowsLaneSkip(err error) (string, error) {
	ci := os.Getenv("CI")
	inCI := ci != "" && ci != "0" && ci != "false"
	switch {
	case os.Getenv(EnvSkipWindowsLane) == "1" && inCI:
		return "", fmt.Errorf("%s=1 but CI is set: CI must run the Windows lane", EnvSkipWindowsLane)
	case os.Getenv(EnvSkipWindowsLane) == "1":
		return EnvSkipWindowsLane + "=1: the Windows lane did NOT run", nil
	case errors.Is(err, errNoWine) && !inCI:
		return "the Windows lane did NOT run: " + err.Error(), nil
	}
	return "", err
}
