package diag

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// echoTraces are packets through every kind of frontend the fixture has.
var echoTraces = [][3]string{
	{client + ":40000", frontendIP + ":80", "tcp"},
	{"198.51.100.7:40000", selfIP + ":30080", "tcp"},
	{"198.51.100.7:40000", ingressIP + ":443", "tcp"},
	{client + ":40000", "10.96.0.60:80", "tcp"},
	{"[" + dualA6 + "]:40000", "[fd00:10:96::60]:80", "tcp"},
	{"198.51.100.7:40000", selfIP + ":30060", "tcp"},
	{"[2001:db8::7]:40000", "[fd00::11]:30060", "tcp"},
}

// TestDiagnoseAndTraceAgreeUnderEveryEcho: the table (rows, owners,
// verdicts, the count to correct that sets the exit code, notes) and every
// trace read the same however HNS echoes what hnsproxy wrote
// (docs/simulator.md, "Echo profiles"), on l2bridge and overlay, Windows
// Server 2022 and 2025, as under exact answers, before and after drift
// (missing, foreign and extra rows). What may differ is what
// HNS shows: the case of its GUIDs and the flags a row lists (HNS's,
// which may lack those it does not echo). Under reorder a trace may
// follow another backend: like VFP, it picks one by a hash over the order
// HNS lists them in, so only the table is compared there.
func TestDiagnoseAndTraceAgreeUnderEveryEcho(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, netType := range []hnslb.NetworkType{hnslb.NetworkTypeL2Bridge, hnslb.NetworkTypeOverlay} {
			t.Run(profile+"/"+string(netType), func(t *testing.T) {
				on := fixtureNode{profile: profile, network: netType, dualStack: true}
				exact, drifted := newFixtureOn(t, on, sim.Echo{}), newFixtureOn(t, on, sim.Echo{})
				drift(t, drifted)
				for _, name := range append(sim.EchoNames(), "all", "all but reorder") {
					echo, err := sim.ParseEcho(strings.TrimSuffix(name, " but reorder"))
					if err != nil {
						t.Fatal(err)
					}
					echo.Reorder = echo.Reorder && name != "all but reorder" // the rest, traces too
					traces := !echo.Reorder
					f := newFixtureOn(t, on, echo)
					if got, want := diagnosis(t, f, traces), diagnosis(t, exact, traces); got != want {
						t.Errorf("echo %s:\n%s\nexact answers:\n%s", name, got, want)
					}
					drift(t, f)
					if got, want := diagnosis(t, f, traces), diagnosis(t, drifted, traces); got != want {
						t.Errorf("echo %s, drifted:\n%s\nexact answers:\n%s", name, got, want)
					}
				}
			})
		}
	}
}

// drift deletes web/frontend's IPv4 node port load balancer behind
// hnsproxy's back and stores a foreign one on 10.96.9.9:80 with web-a's
// endpoint, and replaces the load balancer on the IPv6 cluster IP of
// web/dual by a foreign one to backend port 9090: rows missing, extra and
// foreign, and one to replace.
func drift(t *testing.T, f *fixture) {
	t.Helper()
	var webAID string
	for _, ep := range f.hns.Snapshot().Endpoints {
		if ep.HasAddress(netip.MustParseAddr(webA)) {
			webAID = ep.ID
		}
	}
	for _, lb := range f.hns.Snapshot().LoadBalancers {
		k, _ := reconciler.KeyOf(&lb)
		if (k.VIP == "" && k.Port == 30080) || k.VIP == "fd00:10:96::60" {
			if err := f.hns.DeleteLoadBalancerOutOfBand(lb.ID); err != nil {
				t.Fatal(err)
			}
		}
		if k.VIP == "fd00:10:96::60" {
			lb.ID, lb.PortMappings = "", []hnslb.PortMapping{lb.PortMappings[0]}
			lb.PortMappings[0].InternalPort = 9090
			if _, err := f.hns.PutLoadBalancerOutOfBand(lb); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := f.hns.PutLoadBalancerOutOfBand(hnslb.LoadBalancer{FrontendVIPs: []string{"10.96.9.9"}, SchemaVersion: hnslb.V2,
		PortMappings:         []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: 80, InternalPort: 80}},
		HostComputeEndpoints: []string{webAID}}); err != nil {
		t.Fatal(err)
	}
}

// diagnosis is the fixture's count to correct, report and, with traces,
// its traces of echoTraces as text, GUIDs in lower case and without the
// flags HNS shows.
func diagnosis(t *testing.T, f *fixture, traces bool) string {
	t.Helper()
	in := f.read()
	r := Diagnose(in)
	for i := range r.LoadBalancers {
		r.LoadBalancers[i].Flags = nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "to correct: %d\n", r.ToCorrect())
	writeJSON(t, &b, r)
	for _, p := range echoTraces {
		if !traces {
			break
		}
		tr, err := Trace(in, mustPacket(t, p[0], p[1], p[2]))
		if err != nil {
			t.Fatal(err)
		}
		if tr.LoadBalancer != nil {
			tr.LoadBalancer.Flags = nil
		}
		writeJSON(t, &b, tr)
	}
	return strings.ToLower(strings.ReplaceAll(b.String(), f.stateFile, "state.json"))
}

func writeJSON(t *testing.T, b *strings.Builder, v any) {
	t.Helper()
	out, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	b.Write(out)
	b.WriteString("\n")
}
