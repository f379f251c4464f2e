package diag

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// TestJSONShape pins the keys of --output json, which support bundles and
// scripts read: a renamed Go field must not rename a key unnoticed.
func TestJSONShape(t *testing.T) {
	f := newFixture(t)
	in := f.read()
	keys := func(v any) []string {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(m))
	}
	r := Diagnose(in)
	cip := row(t, r, "web/frontend:http", RoleClusterIP)
	tr, err := Trace(in, mustPacket(t, client+":40000", frontendIP+":80", "tcp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		v    any
		want []string
	}{
		{"report", r, []string{"hnsVersion", "loadBalancers", "network", "networkType", "node", "nodeIPs", "notes", "ownership", "stateFile"}},
		{"row", cip, []string{"backends", "flags", "frontend", "id", "owner", "role", "service", "state"}},
		{"backend", cip.Backends[0], []string{"endpointID", "ip", "local", "node", "pod"}},
		{"trace", tr, []string{"backend", "hops", "loadBalancer", "outcome", "packet", "summary", "verdict"}},
	} {
		if got := keys(tc.v); !slices.Equal(got, tc.want) {
			t.Errorf("%s keys %q, want %q", tc.what, got, tc.want)
		}
	}
}
