package reconciler

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// echoProfiles are the simulator's echo options one by one, and all at once.
func echoProfiles(t *testing.T) map[string]sim.Echo {
	out := map[string]sim.Echo{"exact": {}}
	for _, n := range append(sim.EchoNames(), "all") {
		e, err := sim.ParseEcho(n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = e
	}
	return out
}

// echoServices are load balancers with every flag hnsproxy sets: DSR,
// NodePort (LocalRoutedVIP + VipExternalIP), an external IP, the flags no
// capture shows echoed (ILB, UseMux, PreserveDIP), session affinity, and,
// where HNS has dual-stack, IPv6 ClusterIP and NodePort.
func (e *env) echoServices() []intent.LB {
	e.local("10.244.1.10")
	e.local("10.244.1.11")
	dsr := lb("10.96.0.10", 53, loc("10.244.1.10"), rem("10.244.2.20", "192.168.0.2"))
	dsr.Flags = hnslb.LoadBalancerFlagsDSR
	nodePort := lb("", 30080, loc("10.244.1.10"), loc("10.244.1.11"), rem("10.244.3.30", "192.168.0.3"))
	nodePort.PortFlags = hnslb.PortMappingFlagsLocalRoutedVIP | hnslb.PortMappingFlagsVipExternalIP
	external := lb("203.0.113.10", 443, loc("10.244.1.11"))
	external.PortFlags = hnslb.PortMappingFlagsVipExternalIP
	external.Origin = intent.OriginExternalIP // a tenant's: never taken from another agent
	if e.profile.Features().SessionAffinity {
		external.Distribution = hnslb.DistributionSourceIP
	}
	unconfirmed := lb("10.96.0.40", 8443, loc("10.244.1.10"))
	unconfirmed.PortFlags = hnslb.PortMappingFlagsILB | hnslb.PortMappingFlagsUseMux | hnslb.PortMappingFlagsPreserveDIP
	out := []intent.LB{dsr, nodePort, external, unconfirmed}
	if e.profile.Features().IPv6DualStack {
		if _, err := e.hns.CreateEndpoint(ctx, e.netID, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: "fd00:10:244:1::10"}}}); err != nil {
			e.t.Fatal(err)
		}
		cluster6 := lb("fd00:10:96::10", 80, loc("fd00:10:244:1::10"))
		cluster6.Key.Family, cluster6.SourceVIP = intent.IPv6, "fd00:10:244:1::2"
		nodePort6 := cluster6
		nodePort6.Key.VIP, nodePort6.Key.Port = "", 30081
		nodePort6.PortFlags = nodePort.PortFlags
		out = append(out, cluster6, nodePort6)
	}
	return out
}

// TestEchoProfilesNoChurn: whatever liberties HNS takes with what it
// answers, on every Windows version, three drift-repair periods and two
// restarts with nothing changed write nothing, and neither does a restart
// that lost the state file (adoption without baselines); a real drift is
// repaired by the next repair period.
func TestEchoProfilesNoChurn(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025Mod4, sim.ProfileWS2025} {
		for name, echo := range echoProfiles(t) {
			t.Run(profile+"/"+name, func(t *testing.T) {
				e := newEnv(t, profile)
				e.hns.SetEcho(echo)
				want := e.echoServices()
				r := e.started(want...)
				for period := range 3 {
					e.clock.Step(5 * time.Minute)
					if err := r.Repair(ctx); err != nil {
						t.Fatal(err)
					}
					if res := r.Sync(ctx); res.Pending+res.Failed != 0 {
						t.Fatalf("period %d: %+v", period, res)
					}
				}
				if c := e.counters(); c.Writes() != 0 {
					t.Errorf("three repair periods wrote %v", c.Calls)
				}
				for restart := range 2 {
					var res SyncResult
					r, res = e.start(e.hns, want...)
					e.clock.Step(5 * time.Minute)
					if err := r.Repair(ctx); err != nil {
						t.Fatal(err)
					}
					r.Sync(ctx)
					if c := e.counters(); c.Writes() != 0 || res.Pending+res.Failed != 0 {
						t.Errorf("restart %d and a repair period: %+v, calls %v", restart, res, c.Calls)
					}
				}
				if err := os.Remove(e.stateFile); err != nil {
					t.Fatal(err)
				}
				r, res := e.start(e.hns, want...)
				// Without baselines the distribution is trusted as written:
				// where HNS does not answer it, the sticky load balancer is
				// replaced, once (docs/reliability.md, "Echo-proof identity").
				replaced := 0
				if echo.DropDistribution && e.profile.Features().SessionAffinity {
					replaced = 1
				}
				if c := e.counters(); c.Writes() != 2*replaced || res.Pending+res.Failed != 0 {
					t.Errorf("restart without a state file: %+v, calls %v, want %d load balancers replaced", res, c.Calls, replaced)
				}
				e.assertRealized(want)
				e.driftIsRepairedInOnePeriod(r, want)
			})
		}
	}
}

// driftIsRepairedInOnePeriod changes load balancers behind r's back, in
// ways every echo shows, and expects one Repair and Sync to restore them.
func (e *env) driftIsRepairedInOnePeriod(r *Reconciler, want []intent.LB) {
	e.t.Helper()
	drifts := []struct {
		name   string
		key    intent.LBKey
		change func(*hnslb.LoadBalancer)
	}{
		{"backend gone", want[1].Key, func(l *hnslb.LoadBalancer) { l.HostComputeEndpoints = l.HostComputeEndpoints[1:] }},
		{"port mapping changed", want[2].Key, func(l *hnslb.LoadBalancer) { l.PortMappings[0].InternalPort = 9999 }},
		{"flag changed", want[3].Key, func(l *hnslb.LoadBalancer) { l.Flags |= hnslb.LoadBalancerFlagsDSR }},
		{"deleted", want[0].Key, nil},
	}
	for _, d := range drifts {
		got := e.hnsLB(d.key)
		if got == nil {
			e.t.Fatalf("%s: %s not in HNS", d.name, d.key)
		}
		if d.change == nil {
			if err := e.hns.DeleteLoadBalancerOutOfBand(got.ID); err != nil {
				e.t.Fatal(err)
			}
			continue
		}
		d.change(got)
		if _, err := e.hns.PutLoadBalancerOutOfBand(*got); err != nil {
			e.t.Fatal(err)
		}
	}
	e.clock.Step(5 * time.Minute)
	if err := r.Repair(ctx); err != nil {
		e.t.Fatal(err)
	}
	if res := r.Sync(ctx); res.Pending+res.Failed != 0 {
		e.t.Errorf("sync after repair: %+v", res)
	}
	e.assertRealized(want)
	for _, d := range want {
		got := e.hnsLB(d.Key)
		if got == nil {
			continue // reported by assertRealized
		}
		ids := make([]string, 0, len(got.HostComputeEndpoints))
		for range got.HostComputeEndpoints {
			ids = append(ids, "")
		}
		if doc := BuildLB(&d, ids); !slices.Equal(got.PortMappings, doc.PortMappings) || got.Flags != doc.Flags {
			e.t.Errorf("%s after repair: %+v %v, want %+v %v", d.Key, got.PortMappings, got.Flags, doc.PortMappings, doc.Flags)
		}
	}
	// And the period after writes nothing.
	e.hns.ResetCounters()
	e.clock.Step(5 * time.Minute)
	if err := r.Repair(ctx); err != nil {
		e.t.Fatal(err)
	}
	r.Sync(ctx)
	if c := e.counters(); c.Writes() != 0 {
		e.t.Errorf("the period after the repair wrote %v", c.Calls)
	}
}

// TestAdoptionMatch: without a baseline, what the comparator trusts and
// what it tolerates.
func TestAdoptionMatch(t *testing.T) {
	want := &hnslb.LoadBalancer{
		HostComputeEndpoints: []string{"a1b2c3d4-0000-0000-0000-000000000001", "a1b2c3d4-0000-0000-0000-000000000002"},
		SourceVIP:            "10.244.1.2",
		FrontendVIPs:         []string{"fd00::10"},
		PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 8080, ExternalPort: 80,
			Flags: hnslb.PortMappingFlagsLocalRoutedVIP | hnslb.PortMappingFlagsVipExternalIP | hnslb.PortMappingFlagsILB}},
		Flags: hnslb.LoadBalancerFlagsDSR | hnslb.LoadBalancerFlagsIPv6,
	}
	cases := []struct {
		name   string
		change func(*hnslb.LoadBalancer)
		match  bool
	}{
		{"same", func(*hnslb.LoadBalancer) {}, true},
		{"upper-case GUIDs, other order, another schema", func(l *hnslb.LoadBalancer) {
			l.HostComputeEndpoints = []string{"A1B2C3D4-0000-0000-0000-000000000002", "A1B2C3D4-0000-0000-0000-000000000001"}
			l.SchemaVersion = hnslb.SchemaVersion{Major: 2, Minor: 1}
			l.ID = "FFFFFFFF-0000-0000-0000-000000000001"
		}, true},
		{"VIP in another text form", func(l *hnslb.LoadBalancer) { l.FrontendVIPs = []string{"FD00:0::10"} }, true},
		{"unconfirmed flags dropped", func(l *hnslb.LoadBalancer) {
			l.PortMappings[0].Flags = hnslb.PortMappingFlagsLocalRoutedVIP
			l.Flags = hnslb.LoadBalancerFlagsDSR
		}, true},
		{"LocalRoutedVIP missing", func(l *hnslb.LoadBalancer) { l.PortMappings[0].Flags &^= hnslb.PortMappingFlagsLocalRoutedVIP }, false},
		{"DSR missing", func(l *hnslb.LoadBalancer) { l.Flags &^= hnslb.LoadBalancerFlagsDSR }, false},
		{"a flag we do not set", func(l *hnslb.LoadBalancer) { l.PortMappings[0].Flags |= hnslb.PortMappingFlagsPreserveDIP }, false},
		{"another source VIP", func(l *hnslb.LoadBalancer) { l.SourceVIP = "10.244.1.3" }, false},
		{"a backend fewer", func(l *hnslb.LoadBalancer) { l.HostComputeEndpoints = l.HostComputeEndpoints[:1] }, false},
		{"another backend", func(l *hnslb.LoadBalancer) { l.HostComputeEndpoints[0] = "a1b2c3d4-0000-0000-0000-000000000003" }, false},
		{"another internal port", func(l *hnslb.LoadBalancer) { l.PortMappings[0].InternalPort = 8081 }, false},
		{"another distribution", func(l *hnslb.LoadBalancer) { l.PortMappings[0].DistributionType = hnslb.DistributionSourceIP }, false},
		{"no port mapping", func(l *hnslb.LoadBalancer) { l.PortMappings = nil }, false},
	}
	for _, c := range cases {
		echo := *want
		echo.HostComputeEndpoints = slices.Clone(want.HostComputeEndpoints)
		echo.FrontendVIPs = slices.Clone(want.FrontendVIPs)
		echo.PortMappings = slices.Clone(want.PortMappings)
		c.change(&echo)
		if got := adoptionMatch(&echo, want); got != c.match {
			t.Errorf("%s: adoptionMatch %v, want %v", c.name, got, c.match)
		}
	}
}

// TestFingerprintIgnoresOnlyNoise: the baseline is blind to ID, schema
// version, GUID case and order, and sees every other change.
func TestFingerprintIgnoresOnlyNoise(t *testing.T) {
	base := &hnslb.LoadBalancer{
		ID:                   "ffffffff-0000-0000-0000-000000000001",
		HostComputeEndpoints: []string{"a1b2c3d4-0000-0000-0000-000000000001", "a1b2c3d4-0000-0000-0000-000000000002"},
		SourceVIP:            "10.244.1.2", FrontendVIPs: []string{"10.96.0.1"},
		PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 8080, ExternalPort: 80, Flags: 2}},
		Flags:        1, SchemaVersion: hnslb.V2,
	}
	fp := fingerprint(base, base)
	noise := *base
	noise.ID = "FFFFFFFF-0000-0000-0000-000000000001"
	noise.HostComputeEndpoints = []string{"A1B2C3D4-0000-0000-0000-000000000002", "a1b2c3d4-0000-0000-0000-000000000001"}
	noise.SchemaVersion.Minor = 3
	if fingerprint(base, &noise) != fp {
		t.Error("fingerprint sees ID, GUID case, order or schema version")
	}
	for i, change := range []func(*hnslb.LoadBalancer){
		func(l *hnslb.LoadBalancer) { l.Flags = 0 },
		func(l *hnslb.LoadBalancer) {
			l.PortMappings = []hnslb.PortMapping{{Protocol: 6, InternalPort: 8080, ExternalPort: 80}}
		},
		func(l *hnslb.LoadBalancer) { l.SourceVIP = "" },
		func(l *hnslb.LoadBalancer) { l.FrontendVIPs = nil },
		func(l *hnslb.LoadBalancer) { l.HostComputeEndpoints = l.HostComputeEndpoints[:1] },
	} {
		echo := *base
		change(&echo)
		if fingerprint(base, &echo) == fp || fingerprint(&echo, base) == fp {
			t.Errorf("change %d: fingerprint unchanged", i)
		}
	}
}

// TestStateFileBaselinesAreBackwardCompatible: a state file without
// baselines (an older hnsproxy's) still loads and its load balancers are
// adopted without writes; the next state file carries their baselines, and
// a journal record with a baseline reads as a plain "owned" to a decoder
// that does not know the field.
func TestStateFileBaselinesAreBackwardCompatible(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.hns.SetEcho(sim.Echo{DropUndeclaredFlags: true, UpperGUIDs: true})
	want := e.echoServices()
	e.started(want...)
	st, err := loadState(e.stateFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.LoadBalancerBaselines) != len(want) {
		t.Fatalf("baselines %v, want one for each of %d load balancers", st.LoadBalancerBaselines, len(want))
	}
	// What an older hnsproxy writes: the owned IDs only.
	// (%q of a list is no JSON list: written so, the file was corrupt, and
	// the start a takeover that never read it as an older one's.)
	old := olderStateFile(t, st)
	if err := os.WriteFile(e.stateFile, old, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(journalPath(e.stateFile)); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	r, res := e.start(e.hns, want...)
	if c := e.counters(); c.Writes() != 0 || res.Pending+res.Failed != 0 {
		t.Errorf("start on an older state file: %+v, calls %v", res, c.Calls)
	}
	// The adopted load balancers' baselines are written with the first
	// Sync after a Repair.
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	r.Sync(ctx)
	if st, err = loadState(e.stateFile); err != nil || len(st.LoadBalancerBaselines) != len(want) {
		t.Errorf("baselines after adoption %v (%v), want %d", st.LoadBalancerBaselines, err, len(want))
	}
	rec := journalRecord{Add: true, Kind: recordLoadBalancer, ID: "ffffffff-0000-0000-0000-000000000001", Baseline: "1234"}
	lines := encodeRecords([]journalRecord{rec})
	got, err := decodeRecord(lines[:len(lines)-1])
	if err != nil || got != rec {
		t.Errorf("decode %+v %v", got, err)
	}
}

// TestEchoProfilesOverTheWire: the same through hnssim's wire (sim/remote),
// where answers also carry fields hnslb does not know.
func TestEchoProfilesOverTheWire(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	echo, err := sim.ParseEcho("all")
	if err != nil {
		t.Fatal(err)
	}
	e.hns.SetEcho(echo)
	c := serveOverWire(t, remote.WithUnknownFields(remote.NewServer(e.hns, remote.Extras{}), func() bool { return true }))

	want := e.echoServices()
	r, res := e.start(c, want...)
	if res.Pending+res.Failed != 0 {
		t.Fatalf("first sync %+v", res)
	}
	e.hns.ResetCounters()
	e.clock.Step(5 * time.Minute)
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	r.Sync(ctx)
	if _, res := e.start(c, want...); e.counters().Writes() != 0 || res.Pending+res.Failed != 0 {
		t.Errorf("a repair and a restart over the wire: %+v, calls %v", res, e.counters().Calls)
	}
	e.assertRealized(want)
}

// FuzzEchoBaseline: for any load balancer HNS accepts and any combination
// of echo options, the create reply and a later listing give the same
// baseline (no drift without a change), adoptionMatch accepts the listing
// as the document sent, and a changed document is neither.
func FuzzEchoBaseline(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(1), uint8(0), false)
	f.Add(uint8(18), uint8(1), uint8(3), uint8(0x7f), true)
	f.Add(uint8(13), uint8(0), uint8(8), uint8(0x0b), false)
	f.Fuzz(func(t *testing.T, portFlags, lbFlags, backends, echoBits uint8, nodePort bool) {
		e := newEnv(t, sim.ProfileWS2025)
		var echo sim.Echo
		for i, n := range sim.EchoNames() {
			if echoBits&(1<<i) != 0 {
				o, err := sim.ParseEcho(n)
				if err != nil {
					t.Fatal(err)
				}
				echo.DropUndeclaredFlags = echo.DropUndeclaredFlags || o.DropUndeclaredFlags
				echo.DropUnconfirmedFlags = echo.DropUnconfirmedFlags || o.DropUnconfirmedFlags
				echo.UpperGUIDs = echo.UpperGUIDs || o.UpperGUIDs
				echo.Reorder = echo.Reorder || o.Reorder
				echo.OmitEmpty = echo.OmitEmpty || o.OmitEmpty
				echo.SchemaMinor = max(echo.SchemaMinor, o.SchemaMinor)
			}
		}
		e.hns.SetEcho(echo)
		d := lb("10.96.0.1", 80)
		if nodePort {
			d.Key.VIP = ""
		}
		for i := range int(backends%8) + 1 {
			d.Backends = append(d.Backends, loc(fmt.Sprintf("10.244.1.%d", 10+i)))
			e.local(d.Backends[i].IP)
		}
		d.PortFlags = hnslb.PortMappingFlags(portFlags % 32)
		d.Flags = hnslb.LoadBalancerFlags(lbFlags % 2) // DSR or not; IPv6 follows the key
		ids := make([]string, len(d.Backends))
		for i, b := range d.Backends {
			ids[i] = e.locals[b.IP]
		}
		doc := BuildLB(&d, ids)
		created, err := e.hns.CreateLoadBalancer(ctx, doc)
		if err != nil {
			return // a document HNS refuses has no echo
		}
		listed, err := e.hns.ListLoadBalancers(ctx)
		if err != nil || len(listed) != 1 {
			t.Fatalf("list %v %v", listed, err)
		}
		if fingerprint(doc, created) != fingerprint(doc, &listed[0]) {
			t.Errorf("reply %+v and listing %+v differ in baseline", created, listed[0])
		}
		if k, ok := KeyOf(&listed[0]); !ok || k != d.Key {
			t.Errorf("key of the listing %v, want %v", k, d.Key)
		}
		if !adoptionMatch(&listed[0], doc) {
			t.Errorf("adoptionMatch refuses %+v for %+v", listed[0], doc)
		}
		changed := BuildLB(&d, ids)
		changed.PortMappings[0].InternalPort++
		if adoptionMatch(&listed[0], changed) || fingerprint(changed, &listed[0]) == fingerprint(doc, created) {
			t.Error("a changed document passes for the old one")
		}
	})
}

// TestGUIDCaseChangesAcrossRestart: a state file written while HNS answered
// upper-case GUIDs still names the same objects when it answers lower case
// (an update of the node), and the other way round: nothing is rewritten,
// nothing taken for foreign.
func TestGUIDCaseChangesAcrossRestart(t *testing.T) {
	for _, first := range []sim.Echo{{UpperGUIDs: true}, {}} {
		e := newEnv(t, sim.ProfileWS2019)
		e.hns.SetEcho(first)
		want := e.echoServices()
		e.started(want...)
		e.hns.SetEcho(sim.Echo{UpperGUIDs: !first.UpperGUIDs})
		r, res := e.start(e.hns, want...)
		if c := e.counters(); c.Writes() != 0 || res.Pending+res.Failed != 0 || len(res.ForeignHeld) != 0 {
			t.Errorf("upper-case GUIDs %v, then not: %+v, calls %v", first.UpperGUIDs, res, c.Calls)
		}
		e.clock.Step(5 * time.Minute)
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		r.Sync(ctx)
		if c := e.counters(); c.Writes() != 0 {
			t.Errorf("repair after the case change wrote %v", c.Calls)
		}
	}
}
