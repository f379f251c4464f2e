package diag

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
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
// Server 2022 and 2025, as under exact answers. What may differ is what
// HNS shows: the case of its GUIDs and the flags a row lists (HNS's,
// which may lack those it does not echo). Under reorder a trace may
// follow another backend: like VFP, it picks one by a hash over the order
// HNS lists them in, so only the table is compared there.
func TestDiagnoseAndTraceAgreeUnderEveryEcho(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, netType := range []hnslb.NetworkType{hnslb.NetworkTypeL2Bridge, hnslb.NetworkTypeOverlay} {
			t.Run(profile+"/"+string(netType), func(t *testing.T) {
				on := fixtureNode{profile: profile, network: netType, dualStack: true}
				exact := newFixtureOn(t, on, sim.Echo{})
				for _, name := range append(sim.EchoNames(), "all", "all but reorder") {
					echo, err := sim.ParseEcho(strings.TrimSuffix(name, " but reorder"))
					if err != nil {
						t.Fatal(err)
					}
					echo.Reorder = echo.Reorder && name != "all but reorder" // the rest, traces too
					traces := !echo.Reorder
					got := diagnosis(t, newFixtureOn(t, on, echo), traces)
					if want := diagnosis(t, exact, traces); got != want {
						t.Errorf("echo %s:\n%s\nexact answers:\n%s", name, got, want)
					}
				}
			})
		}
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
