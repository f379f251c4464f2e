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

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/internal/buildscript"
	"github.com/hnsproxy/hnsproxy/sim"
)

// The Windows lane runs the release builds of hnsproxy.exe (and hnscni.exe)
// under Wine, in one private prefix per Windows build (hack/wine-prefix.sh), reaching
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

// windowsBuild is the Windows version a node of profile reports in its
// registry: the simulator profile's OS build, the one source of that fact
// (sim.Profile.OSBuild; hnssim reports the same through OSBuild). A profile
// whose build is unknown cannot be played: a Windows registry always names
// its build, and hnsproxy would take another path (the HNS version) than on
// any real node. A UBR of 0 is written as 0, what a build with no
// cumulative update reports.
func windowsBuild(profile string) (hnslb.OSBuild, error) {
	p, err := sim.ProfileByName(profile)
	if err != nil {
		return hnslb.OSBuild{}, fmt.Errorf("windows lane: %w", err)
	}
	if !p.OSBuild.Known() {
		return hnslb.OSBuild{}, fmt.Errorf("windows lane: profile %q has no OS build for the registry to report", profile)
	}
	return p.OSBuild, nil
}

// wine is a prepared prefix: how to run a Windows binary on this machine.
type wine struct {
	loader string   // the wine64 loader
	env    []string // WINEPREFIX and the rest, KEY=VALUE
	build  hnslb.OSBuild
}

// wineState holds what this process prepared: the Windows release binaries
// (built once) and one prefix per Windows build (hack/wine-prefix.sh
// derives its folder from the build). A prefix's registry reports its one
// build for good, so nodes of one cluster can play different profiles and
// one cluster's preparation never rewrites a prefix another one runs in.
var wineState struct {
	mu       sync.Mutex
	exes     string // folder of the Windows release binaries
	prefixes map[hnslb.OSBuild]*wine
}

// prepareWine builds the Windows release binaries (once per process) and
// readies the prefix of profile's Windows build (once per build).
func prepareWine(profile string) (*wine, string, error) {
	build, err := windowsBuild(profile)
	if err != nil {
		return nil, "", err
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
	if w := wineState.prefixes[build]; w != nil {
		return w, wineState.exes, nil
	}
	w, err := runWinePrefix(build, "")
	if err != nil {
		return nil, "", err
	}
	if wineState.prefixes == nil {
		wineState.prefixes = map[hnslb.OSBuild]*wine{}
	}
	wineState.prefixes[build] = w
	return w, wineState.exes, nil
}

// runWinePrefix readies the prefix of build with hack/wine-prefix.sh, the
// build's own or, with dir, a private one, and reads the environment it
// prints.
func runWinePrefix(build hnslb.OSBuild, dir string) (*wine, error) {
	args := []string{"--os-build", build.String()}
	if dir != "" {
		args = append(args, "--prefix", dir)
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "hack/wine-prefix.sh"), args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, &out, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 {
			return nil, errNoWine
		}
		return nil, fmt.Errorf("hack/wine-prefix.sh: %w\n%s", err, stderr.String())
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
		return nil, fmt.Errorf("hack/wine-prefix.sh named no wine loader:\n%s", out.String())
	}
	return w, nil
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
	inCI := InCI()
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
