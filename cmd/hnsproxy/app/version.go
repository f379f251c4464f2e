package app

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"

	"k8s.io/apimachinery/pkg/version"
)

// gitVersion is set at build time:
// -ldflags "-X github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app.gitVersion=v0.1.0".
var gitVersion = "v0.0.0-dev"

// kubeProxyCompat is the kube-proxy release whose flags, config and metrics hnsproxy mirrors.
const kubeProxyCompat = "1.37"

// Version describes this binary.
func Version() version.Info {
	v := gitVersion
	if bi, ok := debug.ReadBuildInfo(); ok && v == "v0.0.0-dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return version.Info{
		GitVersion: v,
		GoVersion:  runtime.Version(),
		Compiler:   runtime.Compiler,
		Platform:   runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// versionFlag is --version (kube-proxy's verflag semantics: --version prints
// the version, --version=raw the whole struct; both exit).
type versionFlag string

func (v *versionFlag) Set(s string) error {
	if s == "raw" {
		*v = "raw"
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true, false or raw: %w", err)
	}
	*v = versionFlag(strconv.FormatBool(b))
	return nil
}
func (v *versionFlag) String() string   { return string(*v) }
func (v *versionFlag) Type() string     { return "version" }
func (v *versionFlag) IsBoolFlag() bool { return true }

// print writes the version if asked and reports whether it did.
func (v versionFlag) print(w io.Writer) bool {
	switch v {
	case "raw":
		fmt.Fprintf(w, "%#v\n", Version())
	case "true":
		info := Version()
		// Scripts written for kube-proxy parse the first vMAJOR.MINOR of
		// "Kubernetes v1.37.2" (Calico's kube-proxy start script, for one,
		// drops --enable-dsr below v1.14), so the line leads with the
		// kube-proxy release hnsproxy stands in for; hnsproxy's own version follows.
		fmt.Fprintf(w, "Kubernetes v%s.0 (hnsproxy %s, %s, %s)\n", kubeProxyCompat, info.GitVersion, info.GoVersion, info.Platform)
	default:
		return false
	}
	return true
}
