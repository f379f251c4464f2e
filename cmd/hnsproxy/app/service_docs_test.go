package app

import (
	"regexp"
	"testing"

	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// A failure of the daemon under --windows-service, where the service's
// failure-actions flag is set ("sc.exe failureflag <name> 1"), ends with
// the service reporting SERVICE_STOPPED and a service-specific exit code
// (scmHandler.Execute returns true, 1; TestSCMHandlerFailure). For the SCM
// that is a non-crash failure, whose recovery actions ("sc.exe failure")
// run only with that flag (SERVICE_FAILURE_ACTIONS_FLAG,
// fFailureActionsOnNonCrashFailures, in Microsoft's winsvc.h reference);
// without it hnsproxy ends as a crash, as kube-proxy does
// (endFailedService), which loses the exit code. The install commands in
// docs/operators.md set both, so a failed hnsproxy service is restarted and
// says why it stopped.
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
	if !regexp.MustCompile(`(?m)^sc\.exe failureflag ` + name + ` 1\s*$`).MatchString(section) {
		t.Errorf("the install does not set the failure-actions flag of service %s (sc.exe failureflag %s 1): hnsproxy reports a failure as SERVICE_STOPPED with exit code 1, for which the SCM runs no recovery action without it", create[1], create[1])
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
