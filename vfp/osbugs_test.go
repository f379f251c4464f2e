package vfp

import (
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestOSBugsDropOnlyTheFlowsTheyBreak: a node whose snapshot lists a known
// OS bug loses the flows the bug breaks, in the narrowest reading of the
// published warning (osbugs.go), and no other: a trace that blamed the bug
// for a flow it spares would send operators to a workaround they do not
// need, and one that missed it would call a broken Service fine.
func TestOSBugsDropOnlyTheFlowsTheyBreak(t *testing.T) {
	dsrBug, npBug := hnslb.BugL2BridgeDSRPodToService, hnslb.BugOverlayNodePortRemote
	for _, tc := range []struct {
		name    string
		overlay bool
		bugs    []hnslb.OSBug
		pkt     Packet
		bug     hnslb.OSBug // the bug the trace blames, "" for none
	}{
		{"l2bridge: a pod through a DSR load balancer", false, []hnslb.OSBug{dsrBug}, tcp(podA1+":40000", "10.96.0.60:80"), dsrBug},
		{"l2bridge: the same flow on a build without the bug", false, nil, tcp(podA1+":40000", "10.96.0.60:80"), ""},
		{"l2bridge: a pod through a load balancer without DSR", false, []hnslb.OSBug{dsrBug}, tcp(podA1+":40000", "10.96.0.20:80"), ""},
		{"l2bridge: a client from outside through a DSR load balancer", false, []hnslb.OSBug{dsrBug}, tcp(client+":5555", ipA+":30081"), ""},
		{"overlay: a DSR load balancer is not the l2bridge bug", true, []hnslb.OSBug{dsrBug}, tcp(podA1+":40000", "10.96.0.60:80"), ""},
		{"overlay: a client's NodePort packet sent to another node", true, []hnslb.OSBug{npBug}, tcp(client+":5555", ipA+":30080"), npBug},
		{"overlay: a client's NodePort packet kept on the node", true, []hnslb.OSBug{npBug}, tcp(client+":5555", ipA+":30082"), ""},
		{"overlay: a pod's NodePort packet sent to another node", true, []hnslb.OSBug{npBug}, tcp(podA1+":40000", ipA+":30080"), ""},
		{"overlay: a client's packet to an ingress IP sent to another node", true, []hnslb.OSBug{npBug}, tcp(client+":5555", "192.0.2.10:443"), ""},
		{"l2bridge: NodePort to another node is not the overlay bug", false, []hnslb.OSBug{npBug}, tcp(client+":5555", ipA+":30080"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := l2bridgeHNS()
			if tc.overlay {
				a, b = overlayHNS()
			}
			a.snap.OSBugs = tc.bugs
			v, err := mustCluster(t, a.asNode(ipA), b.asNode(ipB)).Trace(tc.pkt, Options{Ingress: nodeA})
			if err != nil {
				t.Fatal(err)
			}
			blamed := v.Outcome == Dropped && strings.Contains(v.DropReason, "known OS bug")
			switch {
			case tc.bug != "" && (!blamed || !strings.Contains(v.DropReason, string(tc.bug))):
				t.Errorf("%s: outcome %v (%s), want a drop by %s", tc.pkt, v.Outcome, v.DropReason, tc.bug)
			case tc.bug == "" && (blamed || v.Outcome == Dropped):
				t.Errorf("%s: dropped (%s), want the flow carried", tc.pkt, v.DropReason)
			}
		})
	}
}
