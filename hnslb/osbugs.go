package hnslb

import "slices"

// OSBug is a known Windows dataplane bug that breaks a Kubernetes flow and
// that hnsproxy can work around. The builds they affect come from the
// Kubernetes "Networking on Windows" page (kubernetes.io/docs/concepts/
// services-networking/windows-networking, the warning above "Limitations",
// added by kubernetes/website#31759) and microsoft/Windows-Containers#204.
// None is verified here: no Windows node ran these flows for this project.
type OSBug string

const (
	// BugL2BridgeDSRPodToService: on Windows Server 2022 with KB5005619
	// (OS build 20348.261) or later, pod-to-pod traffic through a Service on
	// an l2bridge network breaks when the load balancer uses DSR. Workaround
	// on the page: turn WinDSR off.
	BugL2BridgeDSRPodToService OSBug = "l2bridge-dsr-pod-to-service"
	// BugOverlayNodePortRemote: on Windows Server 2022 overlay networks, a
	// NodePort connection that the node forwards to a backend on another
	// node breaks. Workaround on the page: externalTrafficPolicy Local.
	BugOverlayNodePortRemote OSBug = "overlay-nodeport-remote-backend"
)

// kb5005619UBR is OS build 20348.261, the 2021-09 preview update KB5005619
// (Windows Server release information, learn.microsoft.com).
const kb5005619UBR = 261

// KnownOSBugs lists the bugs build b is known to have. Windows-Containers#204
// was closed after Microsoft said a fix was being backported to Windows
// Server 2022, but no public source names the build that fixed it, so every
// 20348 build from the first affected one on counts as affected: the
// workarounds cost little and an operator whose build is fixed turns them
// off (--os-bug-workarounds=none). An unknown build has none.
func KnownOSBugs(b OSBuild) []OSBug {
	if b.Build != BuildWS2022 {
		return nil
	}
	bugs := []OSBug{BugOverlayNodePortRemote}
	if b.UBR >= kb5005619UBR {
		bugs = append(bugs, BugL2BridgeDSRPodToService)
	}
	slices.Sort(bugs)
	return bugs
}
