package reconciler

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// appendJournal appends records to the state file's journal as one
// committed batch, as another hnsproxy would have.
func appendJournal(t testing.TB, statePath string, records ...journalRecord) {
	t.Helper()
	f, err := os.OpenFile(journalPath(statePath), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(encodeRecords(append(records, commitRecord))); err != nil {
		t.Fatal(err)
	}
}

// TestJournalRecordsOfANewerHnsproxyKeepOwnership: a downgrade. A newer
// hnsproxy wrote a journal record of a kind this one does not know (as
// "failed-lb" is to the versions before it), whole and with a good
// checksum. It is skipped; it is not damage, so what the state file records
// stays owned and the start is no takeover: a tenant's load balancer on a
// desired external IP is reported, never deleted, and our own load balancer
// no Service wants any more is deleted.
func TestJournalRecordsOfANewerHnsproxyKeepOwnership(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	e.started(want...)
	tenant := externalLB("203.0.113.5", 80, loc("10.244.1.60"))
	theirs := withInternalPort(tenant, 9090)
	theirs.Origin = 0
	foreign := e.foreignOn(theirs, "10.244.1.60")
	gone := e.hnsLB(want[2].Key).ID
	appendJournal(t, e.stateFile, journalRecord{Add: true, Kind: "route-policy", ID: "3c1a5e0e-0000-4000-8000-000000000001"})

	e.hns.ResetCounters()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	e.tweak = func(o *Options) { o.Logger = logger }
	_, res := e.start(e.hns, want[0], want[1], tenant)
	if log := logger.GetSink().(ktesting.Underlier).GetBuffer().String(); !strings.Contains(log, "journal holds records of a newer hnsproxy") {
		t.Errorf("the newer records were not logged; log:\n%s", log)
	}
	if !e.hasLB(foreign) || len(res.ForeignHeld) != 1 {
		t.Errorf("tenant's load balancer present %v, held %+v: want it kept and reported", e.hasLB(foreign), res.ForeignHeld)
	}
	if e.hasLB(gone) {
		t.Error("our load balancer no Service wants was not deleted: its ownership was lost")
	}
	if got := readState(t, e.stateFile); len(got.LoadBalancers) != 2 {
		t.Errorf("state file after the start %+v, want our two load balancers", got)
	}
}

// fixtureState loads testdata/statefile/<dir> (state.json and its journal),
// copied to a temporary directory, and sorts what it lists.
func fixtureState(t *testing.T, dir string) (*stateFile, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.json")
	for _, name := range []string{"state.json", "state.json.journal"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "statefile", dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(path), name), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := loadState(path)
	if err != nil {
		return nil, err
	}
	for _, ids := range [][]string{s.LoadBalancers, s.RemoteEndpoints, s.CreatingRemoteEndpoints, s.DeletedLoadBalancers,
		s.DeletedRemoteEndpoints, s.FailedLoadBalancerCreates, s.Networks} {
		slices.Sort(ids)
	}
	return s, nil
}

// TestStateFileFixtures: state files as each shape of the format was
// written (reconciler/testdata/statefile) load as they meant: the journal
// of 2026-11-24, before commit records, record by record, its snapshot
// from before "networks" recording none (Start then looks for its
// endpoints on every network:
// TestEndpointsOnAnotherNetworkAreFoundWithoutRecordedNetworks); every field and
// record kind of this version, with a last batch left uncommitted; a newer
// hnsproxy's additions (snapshot fields, a field on a known record, a
// record kind) skipped without costing what the file records as owned; and
// a newer, incompatible version refused as corrupt, which Start sets aside
// and answers with a takeover (TestCorruptStateFileIsLoggedAndRebuilt).
func TestStateFileFixtures(t *testing.T) {
	lbID := func(n int) string { return fmt.Sprintf("11111111-0000-4000-8000-%012d", n) }
	epID := func(n int) string { return fmt.Sprintf("eeeeeeee-0000-4000-8000-%012d", n) }
	key := intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.40", Protocol: 6, Port: 80}

	s, err := fixtureState(t, "journal-without-commits")
	if err != nil || s.fresh || s.journalStopped != nil || s.newerRecords != 0 ||
		!slices.Equal(s.LoadBalancers, []string{lbID(2), lbID(3)}) || !slices.Equal(s.RemoteEndpoints, []string{epID(1), epID(2)}) ||
		!slices.Equal(s.CreatingLoadBalancers, []intent.LBKey{key}) || !slices.Equal(s.CreatingRemoteEndpoints, []string{"10.244.2.5"}) ||
		s.Networks != nil {
		t.Errorf("journal without commits: %+v, %v", s, err)
	}

	// The snapshot declares key as sent sticky; the journal withdraws it
	// and declares another as sent without affinity.
	declared := intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.41", Protocol: 6, Port: 80}
	s, err = fixtureState(t, "every-field")
	if err != nil || s.fresh || s.journalStopped != nil || s.newerRecords != 0 ||
		!slices.Equal(s.LoadBalancers, []string{lbID(1), lbID(3)}) || !slices.Equal(s.RemoteEndpoints, []string{epID(1)}) ||
		!maps.Equal(s.LoadBalancerBaselines, map[string]string{lbID(1): "421de4d88243b355", lbID(3): "ac06973a95504109"}) ||
		!slices.Equal(s.CreatingLoadBalancers, []intent.LBKey{declared}) || len(s.CreatingRemoteEndpoints) != 0 ||
		!maps.Equal(s.sentOf(), map[intent.LBKey]string{declared: "0"}) ||
		!slices.Equal(s.DeletedLoadBalancers, []string{lbID(2), lbID(9)}) || !slices.Equal(s.DeletedRemoteEndpoints, []string{epID(9)}) ||
		!slices.Equal(s.FailedLoadBalancerCreates, []string{"ffffffff-0000-4000-8000-000000000001", "ffffffff-0000-4000-8000-000000000002"}) ||
		s.Takeover != "replace-kube-proxy-1" || !slices.Equal(s.Networks, []string{"aaaaaaaa-0000-4000-8000-000000000001"}) ||
		s.LearnedBackendCap == nil || *s.LearnedBackendCap != (learnedCapRecord{Cap: 64, Build: "10.0.20348.2227 HNS 13.2"}) {
		t.Errorf("every field: %+v, %v", s, err)
	}

	s, err = fixtureState(t, "newer-additions")
	if err != nil || s.fresh || s.journalStopped != nil || s.newerRecords != 1 ||
		!slices.Equal(s.LoadBalancers, []string{lbID(2)}) || !slices.Equal(s.RemoteEndpoints, []string{epID(1)}) {
		t.Errorf("a newer hnsproxy's additions: %+v, %v", s, err)
	}

	var corrupt *corruptStateError
	if s, err = fixtureState(t, "newer-version"); !errors.As(err, &corrupt) || !strings.Contains(err.Error(), "version 2") ||
		!strings.Contains(err.Error(), "newer hnsproxy") {
		t.Errorf("a newer version: %+v, %v; want a corrupt state file naming its version as a newer hnsproxy's", s, err)
	}
}

// TestBaselineFingerprintsKeepTheirForm pins what fingerprint returns for
// a few load balancers and echoes. Baselines are kept in state files
// (loadBalancerBaselines, an lb record's baseline) and judged by the
// version that reads them: a change of the canonical form or the hash
// would make every stored baseline look like drift after an upgrade, and
// the first start would rewrite every load balancer on the node (delete and
// create where HNS cannot modify). A change that must come needs a new
// state file version or a fallback for the old baselines. The values are
// FNV-1a (64 bits, hex) of the written and the echoed canonical text, one
// line each, as "f0 s10.244.1.2 v10.96.0.10 p6/8080/80/0/0 b<id> b<id>":
// flags, source VIP, sorted VIPs, sorted port mappings
// (protocol/internal/external/distribution/flags), sorted lower-case
// backend IDs, addresses in canonical form.
func TestBaselineFingerprintsKeepTheirForm(t *testing.T) {
	pm := func(proto uint32, in, ext uint16, flags hnslb.PortMappingFlags) []hnslb.PortMapping {
		return []hnslb.PortMapping{{Protocol: proto, InternalPort: in, ExternalPort: ext, Flags: flags}}
	}
	clusterIP := &hnslb.LoadBalancer{
		SourceVIP: "10.244.1.2", FrontendVIPs: []string{"10.96.0.10"}, PortMappings: pm(6, 8080, 80, 0),
		HostComputeEndpoints: []string{"3f2504e0-4f89-11d3-9a0c-0305e82c3301", "1b4e28ba-2fa1-11d2-883f-0016d3cca427"},
	}
	echoed := *clusterIP // as HNS may answer: GUIDs upper case, in another order, with an ID and a schema
	echoed.ID = "0d5e1c9a-0000-4000-8000-000000000001"
	echoed.SchemaVersion = hnslb.SchemaVersion{Major: 2, Minor: 2}
	echoed.HostComputeEndpoints = []string{"1B4E28BA-2FA1-11D2-883F-0016D3CCA427", "3F2504E0-4F89-11D3-9A0C-0305E82C3301"}
	nodePortV6 := &hnslb.LoadBalancer{
		Flags: hnslb.LoadBalancerFlagsIPv6, SourceVIP: "fd00:10:244:1::2", PortMappings: pm(17, 53, 30053, hnslb.PortMappingFlagsLocalRoutedVIP),
		HostComputeEndpoints: []string{"9a1f0c2e-0000-4000-8000-00000000000a"},
	}
	longForm := *nodePortV6 // the IPv6 address as HNS may print it, the flag dropped
	longForm.SourceVIP = "fd00:10:244:1:0:0:0:2"
	longForm.Flags = 0
	dsr := &hnslb.LoadBalancer{
		Flags: hnslb.LoadBalancerFlagsDSR, FrontendVIPs: []string{"203.0.113.5", "198.51.100.7"},
		PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 443, ExternalPort: 443, Flags: hnslb.PortMappingFlagsVipExternalIP}, {Protocol: 6, InternalPort: 80, ExternalPort: 80}},
	}
	for _, c := range []struct {
		name          string
		written, echo *hnslb.LoadBalancer
		want          string
	}{
		{"cluster IP, echoed as sent", clusterIP, clusterIP, "3cd672daf1032c85"},
		{"cluster IP, echoed in another case and order", clusterIP, &echoed, "3cd672daf1032c85"},
		{"IPv6 node port, echoed in long form without its flag", nodePortV6, &longForm, "23afdbe3a407273f"},
		{"DSR, two VIPs and port mappings", dsr, dsr, "3668801003226cd5"},
	} {
		if got := fingerprint(c.written, c.echo); got != c.want {
			t.Errorf("%s: fingerprint %q, want %q", c.name, got, c.want)
		}
	}
}

// TestCleanupLeavesAStateFileOfANewerHnsproxyAlone: --cleanup run by an
// older binary (an image rolled back, then hnsproxy uninstalled) on a state
// file that holds what only a newer hnsproxy reads: a newer snapshot
// version, a snapshot field, a journal record kind or a record field it
// does not know. What it cannot read may name objects to delete (as
// failedLoadBalancerCreates and an unconfirmed delete do to the versions
// before them), and a cleanup removes or sets aside the file it read, so
// the newer version's --cleanup would then find nothing either and those
// objects stay in HNS for good. It refuses before it deletes anything and
// leaves both files as they were. A state file of its own version is
// cleaned up as ever (TestCleanupDeletesOwnedObjectsOnly).
func TestCleanupLeavesAStateFileOfANewerHnsproxyAlone(t *testing.T) {
	line := func(record string) string {
		return fmt.Sprintf("%08x %s\n", crc32.Checksum([]byte(record), castagnoli), record)
	}
	cases := []struct {
		name, snapshotField, journalLine string
		version                          int
		want                             string
	}{
		{name: "newer version", version: 2, want: "version 2"},
		{name: "snapshot field", snapshotField: `"routePolicies":["cccccccc-0000-4000-8000-000000000001"]`, want: "routePolicies"},
		{name: "record kind", journalLine: line(`{"add":true,"kind":"route-policy","id":"cccccccc-0000-4000-8000-000000000002"}`), want: "route-policy"},
		{name: "record field", journalLine: line(`{"add":false,"kind":"lb","id":"11111111-0000-4000-8000-000000000001","kept":true}`), want: "kept"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			e.started(e.threeServices()...)
			raw, err := os.ReadFile(e.stateFile)
			if err != nil {
				t.Fatal(err)
			}
			if c.version != 0 {
				raw = bytes.Replace(raw, []byte(`"version":1`), fmt.Appendf(nil, `"version":%d`, c.version), 1)
			}
			if c.snapshotField != "" {
				raw = bytes.Replace(raw, []byte(`{`), []byte("{"+c.snapshotField+","), 1)
			}
			if err := os.WriteFile(e.stateFile, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			if c.journalLine != "" {
				f, err := os.OpenFile(journalPath(e.stateFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
				if err != nil {
					t.Fatal(err)
				}
				_, err = f.WriteString(c.journalLine + line(`{"add":false,"kind":"commit"}`))
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			before := dirContents(t, filepath.Dir(e.stateFile))

			e.hns.ResetCounters()
			res, err := Cleanup(ctx, e.hns, e.options())
			if !errors.Is(err, ErrNewerStateFile) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("cleanup: %v; want %v naming %q", err, ErrNewerStateFile, c.want)
			}
			if n := e.counters().Writes(); n != 0 || res.DeletedLoadBalancers+res.DeletedEndpoints != 0 || res.StateRemoved {
				t.Errorf("cleanup made %d HNS writes, result %+v; want none, the state file kept", n, res)
			}
			if after := dirContents(t, filepath.Dir(e.stateFile)); !maps.Equal(after, before) {
				t.Errorf("state directory after cleanup %v, want it as it was: %v", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
			}
		})
	}
	// The fixtures of this version's shapes hold nothing newer; those of a
	// newer hnsproxy do.
	for dir, newer := range map[string]bool{"journal-without-commits": false, "every-field": false, "newer-additions": true, "newer-version": true} {
		if got := newerContent(osFS{}, filepath.Join("testdata", "statefile", dir, "state.json")); (got != "") != newer {
			t.Errorf("%s: newer content %q, want some: %v", dir, got, newer)
		}
	}
}

// dirContents is each file's content in dir, by name.
func dirContents(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(raw)
	}
	return out
}
