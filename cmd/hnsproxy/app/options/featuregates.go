package options

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	metricsfeatures "k8s.io/component-base/metrics/features"
)

// The Windows proxy's gates, with the history kube-proxy v1.37.2 registers
// (pkg/features/kube_features.go, unchanged from v1.36.3):
// kubernetes_feature_enabled reports each one's stage from it. The Win*
// gates and PreferSameTrafficDistribution are GA and locked on: asking for
// them off is an error in kube-proxy and here.
const (
	// WinDSR allows Direct Server Return load balancers.
	WinDSR featuregate.Feature = "WinDSR"
	// WinOverlay allows overlay (VXLAN) networks.
	WinOverlay featuregate.Feature = "WinOverlay"
	// AllowServiceExternalIPs, off, stops programming Service
	// spec.externalIPs (kube-proxy 1.36 and 1.37, KEP-5707: the field is
	// deprecated and tenant-controlled, the CVE-2020-8554 class).
	AllowServiceExternalIPs featuregate.Feature = "AllowServiceExternalIPs"
	// PreferSameTrafficDistribution governs the node hints that
	// trafficDistribution: PreferSameNode makes, which hnsproxy applies
	// (proxier/desired/topology.go). GA and locked on since 1.35, so asking
	// for it off stops the start, as in kube-proxy 1.37.
	PreferSameTrafficDistribution featuregate.Feature = "PreferSameTrafficDistribution"
)

var proxyFeatureGates = map[featuregate.Feature]featuregate.VersionedSpecs{
	WinDSR: {
		{Version: version.MustParse("1.14"), Default: false, PreRelease: featuregate.Alpha},
		{Version: version.MustParse("1.33"), Default: true, PreRelease: featuregate.Beta},
		{Version: version.MustParse("1.34"), Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	},
	WinOverlay: {
		{Version: version.MustParse("1.14"), Default: false, PreRelease: featuregate.Alpha},
		{Version: version.MustParse("1.20"), Default: true, PreRelease: featuregate.Beta},
		{Version: version.MustParse("1.34"), Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	},
	AllowServiceExternalIPs: {
		// KEP-5707 deprecates spec.externalIPs, not yet the gate: kube-proxy
		// 1.37 has it GA since 1.0 and not locked, so it can be turned off.
		{Version: version.MustParse("1.0"), Default: true, PreRelease: featuregate.GA},
	},
	PreferSameTrafficDistribution: {
		{Version: version.MustParse("1.33"), Default: false, PreRelease: featuregate.Alpha},
		{Version: version.MustParse("1.34"), Default: true, PreRelease: featuregate.Beta},
		{Version: version.MustParse("1.35"), Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	},
}

// newFeatureGate returns a gate that knows the proxy's, logging's,
// metrics' and client-go's features, as kube-proxy's does.
func newFeatureGate() featuregate.MutableVersionedFeatureGate {
	fg := featuregate.NewFeatureGate()
	for _, add := range []func(featuregate.MutableVersionedFeatureGate) error{
		func(g featuregate.MutableVersionedFeatureGate) error { return g.AddVersioned(proxyFeatureGates) },
		logsapi.AddFeatureGates,
		metricsfeatures.AddFeatureGates,
		addClientGoGates,
	} {
		if err := add(fg); err != nil {
			panic(fmt.Sprintf("registering feature gates: %v", err)) // programming error: duplicate gate names
		}
	}
	return fg
}

// resolveFeatureGates applies requested gates. kube-proxy shares the whole
// Kubernetes gate list and rejects names it has never heard of; hnsproxy
// knows only the gates that change what it does, so any other name (a
// Kubernetes gate an existing DaemonSet passes) is ignored with a warning
// rather than failing the start.
func resolveFeatureGates(requested map[string]bool) (featuregate.MutableVersionedFeatureGate, []string, error) {
	fg := newFeatureGate()
	known := fg.GetAll()
	apply := map[string]bool{}
	var ignored []string
	for name, on := range requested {
		if _, ok := known[featuregate.Feature(name)]; ok {
			apply[name] = on
		} else {
			ignored = append(ignored, name)
		}
	}
	sort.Strings(ignored)
	var warnings []string
	for _, name := range ignored {
		warnings = append(warnings, fmt.Sprintf("feature gate %q does not affect hnsproxy; ignored", name))
	}
	if err := fg.SetFromMap(apply); err != nil {
		return nil, warnings, fmt.Errorf("feature gates: %w%s", err, lockedGateHint(known, apply))
	}
	return fg, warnings, nil
}

// lockedGateHint names the requests that set a gate against its lock and
// what to do about them. Start scripts written for an older Kubernetes
// still pass such gates (AKS's, below 1.34, adds WinOverlay=false): the
// fix is to drop the entry, which the bare "locked" error does not say.
func lockedGateHint(known map[featuregate.Feature]featuregate.FeatureSpec, requested map[string]bool) string {
	var hints []string
	for name, on := range requested {
		spec := known[featuregate.Feature(name)]
		if !spec.LockToDefault || on == spec.Default {
			continue
		}
		since := ""
		if spec.Version != nil {
			since = fmt.Sprintf(" since Kubernetes %d.%d", spec.Version.Major(), spec.Version.Minor())
		}
		hints = append(hints, fmt.Sprintf("; remove %s=%t from --feature-gates (or featureGates in the config file): %s is locked to %t%s, in kube-proxy too",
			name, on, name, spec.Default, since))
	}
	sort.Strings(hints)
	return strings.Join(hints, "")
}

// KnownFeatures lists the gates for --help.
func KnownFeatures() []string { return newFeatureGate().KnownFeatures() }
