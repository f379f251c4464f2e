package app

import (
	"regexp"
	"testing"

	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// A failure of the daemon under --windows-service ends with the service
// reporting SERVICE_STOPPED and a service-specific exit code
// (scmHandler.Execute returns true, 1; TestSCMHandlerFailure). For the SCM
// that is a non-crash failure: its recovery actions ("sc.exe failure") run
// for one only when the service's failure-actions flag is set ("sc.exe
// failureflag <name> 1"); without it they run only when the process dies
// without reporting SERVICE_STOPPED (SERVICE_FAILURE_ACTIONS_FLAG,
// fFailureActionsOnNonCrashFailures, in Microsoft's winsvc.h reference).
// The install commands in docs/operators.md must set both, or a failed
// hnsproxy service stays stopped.
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
