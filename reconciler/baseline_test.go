package reconciler

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestBackendIDsKeepTheBaselineFormat pins appendBackendIDs to the form the
// baselines in state files were written in: each ID lowercased, in the
// order of the lowercased forms. A change here would make every stored
// baseline look like drift after an upgrade.
func TestBackendIDsKeepTheBaselineFormat(t *testing.T) {
	old := func(ids []string) string {
		var buf []byte
		for _, id := range lowerSorted(ids) {
			buf = append(append(buf, " b"...), id...)
		}
		return string(buf)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	guid := func() string {
		g := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint64()&0xffffffffffff)
		if rng.IntN(2) == 0 {
			return toUpperASCII(g)
		}
		return g
	}
	cases := [][]string{
		nil,
		{"A"},
		{"b", "A", "a", "B"},               // case ties: lowercased forms equal
		{"Ab", "aB", "AB-", "ab"},          // a prefix of another
		{"ÄBC", "abc", "Zed", "äbc", "_x"}, // non-ASCII: the old path
		{"[", "a", "Z", "`", "{"},          // bytes between the cases
	}
	for _, n := range []int{1, 2, 10, 16, 17, 100} {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = guid()
		}
		cases = append(cases, ids)
	}
	for _, ids := range cases {
		if got, want := string(appendBackendIDs(nil, ids)), old(ids); got != want {
			t.Errorf("ids %q:\n got %q\nwant %q", ids, got, want)
		}
	}
}

func toUpperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
