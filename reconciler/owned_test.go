package reconciler

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestReadOwnedSeesWhatTheReconcilerRecorded: after a Sync, ReadOwned
// names the load balancer the reconciler created, and
// not a foreign load balancer; reading leaves the state file and journal as
// they were.
func TestReadOwnedSeesWhatTheReconcilerRecorded(t *testing.T) {
	e := newEnv(t, "ws2022")
	e.local("10.244.1.10")
	foreign, err := e.hns.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{
		FrontendVIPs:         []string{"10.96.9.9"},
		PortMappings:         []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: 80, InternalPort: 80}},
		HostComputeEndpoints: []string{e.locals["10.244.1.10"]},
	})
	if err != nil {
		t.Fatal(err)
	}
	ours := lb("10.96.0.10", 80, loc("10.244.1.10"), rem("10.244.2.10", ""))
	e.started(ours)

	before := readFiles(t, e.stateFile)
	o, err := ReadOwned(e.stateFile)
	if err != nil {
		t.Fatal(err)
	}
	mine := e.hnsLB(ours.Key)
	if mine == nil {
		t.Fatal("the reconciler created no load balancer")
	}
	if !o.LoadBalancer(mine.ID) {
		t.Errorf("load balancer %s hnsproxy created is not owned", mine.ID)
	}
	if o.LoadBalancer(foreign.ID) {
		t.Errorf("foreign load balancer %s reads as owned", foreign.ID)
	}
	if o.JournalDamage != nil {
		t.Errorf("JournalDamage = %v", o.JournalDamage)
	}
	if after := readFiles(t, e.stateFile); after != before {
		t.Errorf("ReadOwned changed the state files:\nbefore %s\nafter  %s", before, after)
	}
}

func TestReadOwnedMissingAndCorrupt(t *testing.T) {
	dir := t.TempDir()
	o, err := ReadOwned(filepath.Join(dir, "none.json"))
	if err != nil || o.LoadBalancer("lb-1") {
		t.Errorf("missing file: %+v, %v", o, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.json")); !os.IsNotExist(err) {
		t.Errorf("ReadOwned created the missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOwned(bad); err == nil {
		t.Error("a corrupt state file read without error")
	}
	ok := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(ok, []byte(`{"version":1,"loadBalancers":["LB-Upper"],"remoteEndpoints":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err = ReadOwned(ok)
	if err != nil || !o.LoadBalancer("lb-upper") {
		t.Errorf("IDs compare without case: %+v, %v", o, err)
	}
}

// readFiles is the state file and its journal with their modification times.
func readFiles(t *testing.T, path string) string {
	t.Helper()
	var out string
	for _, p := range []string{path, journalPath(path)} {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			out += p + ": none\n"
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		out += p + " " + info.ModTime().String() + "\n" + string(b)
	}
	return out
}
