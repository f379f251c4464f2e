package reconciler

import (
	"encoding/json"
	"maps"
	"os"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestEveryCreateIsDeclaredWithTheDistributionItSends: at each load
// balancer create the state file on disk declares its key with the
// distribution the create sends (declaredClient), through a Service that
// turns affinity on and off again on a cluster IP (whose key stands
// declared on ws2022 between its creates) and on an external IP, and a
// create retried after its Service turned affinity off.
func TestEveryCreateIsDeclaredWithTheDistributionItSends(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			r := New(&declaredClient{Client: e.hns, t: t, stateFile: e.stateFile}, e.options())
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			cluster := e.backedLB("10.244.1.12", "10.96.0.12", false, intent.OriginClusterIP, false)
			tenant := e.backedLB("10.244.1.13", "203.0.113.5", false, intent.OriginExternalIP, false)
			for _, d := range []hnslb.Distribution{hnslb.DistributionNone, hnslb.DistributionSourceIP, hnslb.DistributionNone} {
				cluster.Distribution, tenant.Distribution = d, d
				upsert(r, cluster, tenant)
				e.converge(r)
				e.assertRealized([]intent.LB{cluster, tenant})
			}
			tenant.Distribution = hnslb.DistributionSourceIP
			upsert(r, tenant)
			e.createTried(r, hnslb.CodeTimeout, 0)
			tenant.Distribution = hnslb.DistributionNone
			upsert(r, tenant)
			e.converge(r)
			e.assertRealized([]intent.LB{cluster, tenant})
			if t.Failed() {
				return
			}
			if got := e.hnsLB(tenant.Key).PortMappings[0].DistributionType; got != hnslb.DistributionNone {
				t.Errorf("the external IP's load balancer holds distribution %d, want none", got)
			}
		})
	}
}

// TestDeclarationRecordsAcrossVersions: the record of what a declared
// create sent survives a journal replay and a snapshot; a declaration an
// older hnsproxy journals after it (no record) leaves the key unrecorded,
// as does a snapshot an older one wrote; and an older hnsproxy, decoding
// with the fields it knows, reads this one's record and snapshot as the
// plain declarations they are.
func TestDeclarationRecordsAcrossVersions(t *testing.T) {
	sticky := intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.12", Protocol: hnslb.ProtocolTCP, Port: 91}
	plain := intent.LBKey{Family: intent.IPv4, VIP: "203.0.113.5", Protocol: hnslb.ProtocolTCP, Port: 91}
	path := t.TempDir() + "/state.json"
	appendJournal(t, path,
		journalRecord{Add: true, Kind: recordCreatingLB, Key: &sticky, SentDistribution: sentText(hnslb.DistributionSourceIP)},
		journalRecord{Add: true, Kind: recordCreatingLB, Key: &plain, SentDistribution: sentText(hnslb.DistributionNone)})
	s, err := loadState(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[intent.LBKey]string{sticky: "2", plain: "0"}
	if got := s.sentOf(); !maps.Equal(got, want) {
		t.Errorf("replayed records %v, want %v", got, want)
	}
	// A snapshot of what was replayed, as Start writes it, read back.
	snap := appendSnapshot(nil, s)
	if err := os.WriteFile(path, snap, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(journalPath(path)); err != nil {
		t.Fatal(err)
	}
	if s, err = loadState(path); err != nil || !maps.Equal(s.sentOf(), want) {
		t.Errorf("records read from the snapshot %v (%v), want %v", s.sentOf(), err, want)
	}
	// An older hnsproxy decodes the snapshot and a record with the fields
	// it knows: the same declarations.
	var older struct {
		CreatingLoadBalancers []intent.LBKey `json:"creatingLoadBalancers"`
	}
	if err := json.Unmarshal(snap, &older); err != nil || len(older.CreatingLoadBalancers) != 2 {
		t.Errorf("an older hnsproxy reads the snapshot's declarations as %v (%v)", older.CreatingLoadBalancers, err)
	}
	var olderRec struct {
		Add  bool          `json:"add"`
		Kind recordKind    `json:"kind"`
		Key  *intent.LBKey `json:"key"`
	}
	rec := appendRecord(nil, journalRecord{Add: true, Kind: recordCreatingLB, Key: &sticky, SentDistribution: "2"})
	if err := json.Unmarshal(rec, &olderRec); err != nil || !olderRec.Add || olderRec.Kind != recordCreatingLB || olderRec.Key == nil || *olderRec.Key != sticky {
		t.Errorf("an older hnsproxy reads %s as %+v (%v)", rec, olderRec, err)
	}
	// An older hnsproxy withdraws the sticky key and declares it again, as
	// it declares: the key is declared, with no record.
	appendJournal(t, path, journalRecord{Kind: recordCreatingLB, Key: &sticky}, journalRecord{Add: true, Kind: recordCreatingLB, Key: &sticky})
	if s, err = loadState(path); err != nil || !maps.Equal(s.sentOf(), map[intent.LBKey]string{plain: "0"}) || len(s.CreatingLoadBalancers) != 2 {
		t.Errorf("after an older hnsproxy's declaration: keys %v, records %v (%v), want both keys and only %s's record", s.CreatingLoadBalancers, s.sentOf(), err, plain)
	}
	// A snapshot an older hnsproxy wrote: declarations without records.
	old := `{"version":1,"loadBalancers":[],"remoteEndpoints":[],"creatingLoadBalancers":[{"Family":4,"VIP":"10.96.0.12","Protocol":6,"Port":91}]}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(journalPath(path)); err != nil {
		t.Fatal(err)
	}
	if s, err = loadState(path); err != nil || len(s.sentOf()) != 0 || len(s.CreatingLoadBalancers) != 1 {
		t.Errorf("an older snapshot: keys %v, records %v (%v), want one key and no record", s.CreatingLoadBalancers, s.sentOf(), err)
	}
}
