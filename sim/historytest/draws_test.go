package historytest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestRandomFaultsDrawEveryPlausibleCode: over a few hundred draws, every
// operation fails with every code that says nothing of its objects, a load
// balancer create or modify with a missing reference's codes too, and an
// applied write only with a lost reply or, for a create or modify, a
// failure of the query after it; no call fails with a not-found code of
// AnyCodes but those, and no applied write with 0x57 or a not-found code.
func TestRandomFaultsDrawEveryPlausibleCode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	failed, applied := map[sim.Op]map[hnslb.ErrorCode]bool{}, map[sim.Op]map[hnslb.ErrorCode]bool{}
	add := func(m map[sim.Op]map[hnslb.ErrorCode]bool, op sim.Op, codes []hnslb.ErrorCode) {
		if m[op] == nil {
			m[op] = map[hnslb.ErrorCode]bool{}
		}
		for _, c := range codes {
			m[op][c] = true
		}
	}
	committed := false
	for range 300 {
		f := RandomFaults(rng, 0.4)
		committed = committed || f.Committed > 0
		for _, op := range sim.Ops() {
			add(failed, op, f.Codes[op])
			add(applied, op, f.AppliedCodes[op])
		}
	}
	if !committed {
		t.Error("no draw applied a failed write")
	}
	for _, op := range sim.Ops() {
		want := StateFreeCodes()
		if op == sim.OpCreateLoadBalancer || op == sim.OpUpdateLoadBalancer {
			want = append(want, sim.MissingBackendCodes()...)
		}
		if got := keys(failed[op]); !sameCodes(got, want) {
			t.Errorf("%s fails with %#x, want %#x", op, got, want)
		}
		var wantApplied []hnslb.ErrorCode
		switch {
		case slices.Contains(createsAndModifies, op):
			wantApplied = AppliedWriteCodes()
		case slices.Contains(deletes, op):
			wantApplied = LostReplyCodes()
		}
		if got := keys(applied[op]); !sameCodes(got, wantApplied) {
			t.Errorf("%s fails applied with %#x, want %#x", op, got, wantApplied)
		}
		for c := range applied[op] {
			if c == hnslb.CodeInvalidParameter || hnslb.IsNotFound(&hnslb.Error{Code: c}) {
				t.Errorf("%s fails applied with %#x, which says the write never happened", op, uint32(c))
			}
		}
	}
}

func keys(m map[hnslb.ErrorCode]bool) []hnslb.ErrorCode {
	var out []hnslb.ErrorCode
	for c := range m {
		out = append(out, c)
	}
	return out
}

func sameCodes(a, b []hnslb.ErrorCode) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
