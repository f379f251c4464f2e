package app

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// A failure of the daemon under --windows-service that no stop asked for
// ends its process without reporting a stop (endFailedService), a crash to
// the SCM, whose recovery actions ("sc.exe failure") run whatever the
// service's failure-actions flag. So the install commands in
// docs/operators.md need a restart action and no flag: with "sc.exe
// failureflag <name> 1" in effect the SCM would restart a service that
// reports a failure while it is being stopped (SERVICE_FAILURE_ACTIONS_FLAG,
// fFailureActionsOnNonCrashFailures, in Microsoft's winsvc.h reference).
func TestServiceInstallDocRestartsAfterAFailure(t *testing.T) {
	section := doctest.Section(t, "docs/operators.md", "## Running as a Windows service")
	create := regexp.MustCompile(`(?m)^sc\.exe create (\S+) `).FindStringSubmatch(section)
	if create == nil {
		t.Fatal("the section installs no service with sc.exe create")
	}
	name := regexp.QuoteMeta(create[1])
	if !regexp.MustCompile(`(?m)^sc\.exe failure ` + name + ` .*actions= restart/`).MatchString(section) {
		t.Errorf("the install gives service %s no restart recovery action (sc.exe failure %s ... actions= restart/...)", create[1], create[1])
	}
	if regexp.MustCompile(`(?m)^sc\.exe failureflag ` + name + ` 1\s*$`).MatchString(section) {
		t.Errorf("the install sets the failure-actions flag of service %s (sc.exe failureflag %s 1): a failure is a crash the SCM restarts without it, and with it a failure while the service stops is restarted too", create[1], create[1])
	}
}

// kube-log-runner opens its -log-file (O_CREATE, component-base
// logs/kube-log-runner) but makes no directory: where the directory is
// missing it exits before it starts hnsproxy, and its error goes to a
// standard error the SCM does not keep, so the service fails to start with
// no trace anywhere. An install in docs/operators.md that runs hnsproxy
// under kube-log-runner must make the log's directory first.
func TestServiceInstallDocMakesTheLogDirectory(t *testing.T) {
	section := doctest.Section(t, "docs/operators.md", "## Running as a Windows service")
	logFiles := regexp.MustCompile(`kube-log-runner\.exe -log-file=(\S+)\\[^\\\s]+ `).FindAllStringSubmatchIndex(section, -1)
	if logFiles == nil {
		t.Fatal("the section has no install under kube-log-runner with a -log-file")
	}
	for _, m := range logFiles {
		dir := section[m[2]:m[3]]
		mkdir := regexp.MustCompile(`(?m)^(New-Item -ItemType Directory -Force|mkdir) ` + regexp.QuoteMeta(dir) + `\s*$`).FindStringIndex(section)
		if mkdir == nil || mkdir[0] > m[0] {
			t.Errorf("the install under kube-log-runner logs to %s without making that directory first (New-Item -ItemType Directory -Force %s)", dir, dir)
		}
	}
}

// The SCM runs the recovery action of a service's Nth failure since its
// count was last reset, and repeats the last action for every failure past
// the list (SERVICE_FAILURE_ACTIONS, winsvc.h); the count goes back to
// zero after reset= seconds without a failure. A single restart/5000 made
// a service that fails at once on a bad configuration start and fail every
// 5 s for as long as nobody looks. hnsproxy also exits
// 1 on purpose, to start again, when its config file or the HNS network
// changes: the first restart after a quiet spell must stay quick (GCE's
// kube-proxy service: restart/10000). So the install steps its restarts up
// to a minute, and a reset period lets a restart hours later start quick
// again (kubelet's CrashLoopBackOff, which a HostProcess hnsproxy gets, is
// reset after 10 minutes of running).
func TestServiceInstallDocStepsItsRestarts(t *testing.T) {
	section := doctest.Section(t, "docs/operators.md", "## Running as a Windows service")
	failure := regexp.MustCompile(`(?m)^sc\.exe failure \S+ reset= (\d+) actions= (\S+)\s*$`).FindStringSubmatch(section)
	if failure == nil {
		t.Fatal(`the section has no "sc.exe failure <name> reset= <seconds> actions= <actions>" line`)
	}
	reset, err := strconv.Atoi(failure[1])
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(failure[2], "/")
	var delays []int
	for i := 0; i+1 < len(parts); i += 2 {
		if parts[i] != "restart" {
			t.Fatalf("action %q in %q: want restarts only", parts[i], failure[2])
		}
		ms, err := strconv.Atoi(parts[i+1])
		if err != nil {
			t.Fatalf("delay %q in %q: %v", parts[i+1], failure[2], err)
		}
		delays = append(delays, ms)
	}
	switch {
	case len(delays) < 2 || !slices.IsSorted(delays) || delays[0] == delays[len(delays)-1]:
		t.Errorf("restart delays %v: want them to step up, the last repeated for every later failure", delays)
	case delays[0] > 10_000:
		t.Errorf("first restart after %d ms: a config file change or a new HNS network restarts hnsproxy on purpose, and should not wait longer than GCE's kube-proxy service (10 s)", delays[0])
	case delays[len(delays)-1] < 60_000:
		t.Errorf("a failure loop restarts every %d ms: want at least a minute between restarts of a service that keeps failing", delays[len(delays)-1])
	}
	if last := delays[len(delays)-1] / 1000; reset <= last || reset > 3600 {
		t.Errorf("reset= %d: want more than the longest delay (%d s), so a loop stays stepped, and at most an hour, so a restart later starts quick", reset, last)
	}
}
