package options

import (
	"strings"
	"testing"

	cliflag "k8s.io/component-base/cli/flag"
)

// usageOf is the --help text of the flag name in a --help section.
func usageOf(t *testing.T, section, name string) string {
	t.Helper()
	var fss cliflag.NamedFlagSets
	NewOptions().AddFlags(&fss)
	f := fss.FlagSet(section).Lookup(name)
	if f == nil {
		t.Fatalf("no --%s in --help section %q", name, section)
	}
	return f.Usage
}

// TestSourceVIPHelpSaysOverlayReservesOne: on overlay an unset source VIP
// is no error, since hnsproxy reserves one through the node's CNI IPAM
// (cmd/hnsproxy/app/sourcevip); --help must not call the flag required
// there, or an operator with one ConfigMap for every node sets a VIP per
// node by hand for nothing.
func TestSourceVIPHelpSaysOverlayReservesOne(t *testing.T) {
	usage := usageOf(t, SectionWinkernel, "source-vip")
	if strings.Contains(usage, "required") || !strings.Contains(usage, "CNI IPAM") {
		t.Errorf("--source-vip's help %q: want it to say that on overlay an unset one is reserved through the node's CNI IPAM", usage)
	}
}

// TestSyncPeriodHelpCallsThePeriodicSyncPartial: the sync --sync-period
// bounds recomputes only what changed (proxier.Sync: a full sync is the
// first, and one after a change of the Node or the configuration, as
// kubeproxy_sync_full_proxy_rules_duration_seconds counts them), so its
// --help must not promise full syncs at that period.
func TestSyncPeriodHelpCallsThePeriodicSyncPartial(t *testing.T) {
	usage := usageOf(t, SectionHNSProxy, "sync-period")
	if strings.Contains(usage, "full sync") || !strings.Contains(usage, "recomputes nothing") {
		t.Errorf("--sync-period's help %q: want it to say that a sync without changes recomputes nothing", usage)
	}
}

// TestProfilingHelpNamesTheVerbosityEndpoint: --profiling serves
// PUT /debug/flags/v too (metrics.Server), which lets whoever reaches the
// metrics address raise the log verbosity; the help names it beside
// /debug/pprof, so turning it on is a choice made knowing that.
func TestProfilingHelpNamesTheVerbosityEndpoint(t *testing.T) {
	usage := usageOf(t, SectionKubeProxy, "profiling")
	if !strings.Contains(usage, "/debug/pprof") || !strings.Contains(usage, "/debug/flags/v") {
		t.Errorf("--profiling's help %q: want it to name /debug/pprof and /debug/flags/v", usage)
	}
}

// TestCleanupHelpNamesEverythingItDeletes: --cleanup deletes what the
// state file records and also every remote endpoint named
// hnsproxy-remote-<IP> (reconciler.Cleanup claims them as Start does: a
// crash can keep one's ID out of the file), so its help names both.
func TestCleanupHelpNamesEverythingItDeletes(t *testing.T) {
	usage := usageOf(t, SectionKubeProxy, "cleanup")
	if !strings.Contains(usage, "--state-file") || !strings.Contains(usage, "hnsproxy-remote-") {
		t.Errorf("--cleanup's help %q: want it to name what --state-file records and the remote endpoints named hnsproxy-remote-<IP>", usage)
	}
}
