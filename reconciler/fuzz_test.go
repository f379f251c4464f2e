package reconciler

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/sim"
)

// FuzzStateFile feeds arbitrary bytes as hnsproxy's state file to a
// restarting reconciler. The placeholders $A, $B, $F and $E in the input
// are replaced by the IDs of real HNS objects (two load balancers hnsproxy
// made, a foreign load balancer and a foreign remote endpoint), so the
// fuzzer can claim real objects as well as junk. Whatever the file holds:
// loadState never panics and either fails or returns a version-1 state;
// Start and Sync never panic; the desired load balancer is realized; a
// foreign object survives unless the file (parsed) names it, as owned or as
// deleted without confirmation; and the file
// written afterwards parses and lists what hnsproxy now owns.
func FuzzStateFile(f *testing.F) {
	for _, seed := range []string{
		``, `{`, `null`, `[]`, `{"version":1}`, `{"version":1,"loadBalancers":null,"remoteEndpoints":null}`,
		`{"version":1,"loadBalancers":["$A","$B"],"remoteEndpoints":[]}`,
		`{"version":1,"loadBalancers":["$A","$B","$F"],"remoteEndpoints":["$E"]}`,
		`{"version":1,"loadBalancers":["$F","$F",""],"remoteEndpoints":["x","$E","$A"]}`,
		`{"version":2,"loadBalancers":["$A"]}`, `{"version":1,"loadBalancers":[1,2]}`, `{"version":1e400}`,
		`{"version":1,"loadBalancers":["$B"],"version":0}`, "\x00\xff\xfe", `{"VERSION":1,"LOADBALANCERS":["$B"]}`,
		`{"version":1,"loadBalancers":["$A"],"deletedLoadBalancers":["$F","$B"],"deletedRemoteEndpoints":["$E",""]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e := newEnv(t, sim.ProfileWS2022)
		e.local("10.244.1.10")
		e.local("10.244.1.11")
		a := lb("10.96.0.10", 53, loc("10.244.1.10"), rem("10.244.2.20", "192.168.0.2"))
		b := lb("10.96.0.20", 80, loc("10.244.1.11"))
		e.started(a, b)
		lbA, lbB := e.hnsLB(a.Key).ID, e.hnsLB(b.Key).ID
		foreignLB, foreignEP := e.foreign()

		for from, to := range map[string]string{"$A": lbA, "$B": lbB, "$F": foreignLB, "$E": foreignEP} {
			data = bytes.ReplaceAll(data, []byte(from), []byte(to))
		}
		if err := os.WriteFile(e.stateFile, data, 0o600); err != nil {
			t.Fatal(err)
		}
		loaded, err := loadState(e.stateFile)
		if err == nil && loaded.Version != stateFileVersion {
			t.Fatalf("loaded a state of version %d", loaded.Version)
		}
		claims := func(ids []string, id string) bool {
			return err == nil && slices.ContainsFunc(ids, func(s string) bool { return strings.EqualFold(s, id) })
		}

		// A restart that only wants a: b is ours or unknown, f is foreign.
		r := e.reconciler()
		upsert(r, a)
		if err := r.Start(ctx); err != nil {
			t.Fatalf("Start with state file %q: %v", data, err)
		}
		e.converge(r)
		if got := e.hnsLB(a.Key); got == nil || !slices.Equal(e.backendIPs(got), ipsOf(a.Backends)) {
			t.Fatalf("desired load balancer not realized after state file %q", data)
		}
		if e.hnsLB(lb("10.96.9.9", 9).Key) == nil && !claims(loaded.ownedLBs(), foreignLB) {
			t.Fatalf("foreign load balancer deleted though the state file %q does not name it", data)
		}
		if !slices.Contains(e.remoteIPs(), "10.244.9.9") && !claims(loaded.ownedEPs(), foreignEP) {
			t.Fatalf("foreign remote endpoint deleted though the state file %q does not name it", data)
		}

		after, err := loadState(e.stateFile)
		if err != nil {
			t.Fatalf("state file unreadable after a sync: %v", err)
		}
		held := map[string]bool{}
		for _, l := range e.snapshot().LoadBalancers {
			held[strings.ToLower(l.ID)] = true
		}
		for _, id := range after.LoadBalancers {
			if !held[strings.ToLower(id)] {
				t.Fatalf("state file lists load balancer %s, which HNS does not hold", id)
			}
		}
		if !slices.ContainsFunc(after.LoadBalancers, func(s string) bool { return strings.EqualFold(s, e.hnsLB(a.Key).ID) }) {
			t.Fatalf("state file %+v does not list the desired load balancer", after)
		}
	})
}
