// Package historytest holds what the random histories of several packages
// draw about HNS: how it echoes, which codes it answers with, which
// faults it has; and the codes the tests of every call answer it with
// (AnyCodes).
package historytest

import (
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// RandomEcho draws each echo option with a chance of one in four, and
// returns the echo and the names drawn.
func RandomEcho(rng *rand.Rand) (sim.Echo, []string) {
	var names []string
	for _, n := range sim.EchoNames() {
		if rng.IntN(4) == 0 {
			names = append(names, n)
		}
	}
	echo, err := sim.ParseEcho(strings.Join(names, ","))
	if err != nil {
		panic(err) // EchoNames are what ParseEcho knows
	}
	return echo, names
}

// RandomErrorVariants draws the codes HNS answers a missing backend, a
// missing load balancer and a taken address with.
func RandomErrorVariants(rng *rand.Rand) sim.ErrorVariants {
	pick := func(codes []hnslb.ErrorCode) hnslb.ErrorCode { return codes[rng.IntN(len(codes))] }
	return sim.ErrorVariants{
		MissingBackend: pick(sim.MissingBackendCodes()), MissingLoadBalancer: pick(sim.MissingLoadBalancerCodes()),
		AddressTaken: pick(sim.AddressTakenCodes()),
	}
}

// RandomFaults draws faults on every operation: failed calls (up to
// maxRate of them), deletes reported done but kept, failed creates that
// leave a load balancer without port mappings, and, each on half of the
// draws, listings that answer objects twice or leave them out (and, on
// half of the latter, gets that leave them out too: GetsLeaveOut), never
// the same object out of more than two looks in a row (LeftOutInARow:
// three in a row is what hnsproxy takes for gone, by design; below it, a
// lost object is a bug). A failed call answers one
// of AnyCodes that is plausible for its operation and for whether HNS
// applied it (docs/simulator.md, "HNS as a service"):
//   - applying nothing, any call may answer a code that says nothing of
//     the objects it names (StateFreeCodes, a random share of them each
//     draw); a load balancer create or modify also a missing reference's
//     code (sim.MissingBackendCodes), as HNS answered a create it could
//     not program (microsoft/hcsshim#1043), whether or not its backends
//     are there;
//   - applied, a create or modify answers what hcn's query of the new
//     document after the write may fail with (AppliedWriteCodes), a delete,
//     one RPC, only a reply lost (LostReplyCodes): never "the parameter is
//     incorrect" nor a not-found code, which would say the write never
//     happened.
//
// A not-found code for an object that is there is not drawn: that is HNS
// answering about state falsely, which hnsproxy takes at its word by design
// (docs/reliability.md, "Every code HNS may answer"); HNS answers the
// not-found codes itself wherever an object is missing, with the codes
// RandomErrorVariants draws.
func RandomFaults(rng *rand.Rand, maxRate float64) sim.Faults {
	var failed []hnslb.ErrorCode
	for len(failed) == 0 {
		for _, c := range StateFreeCodes() {
			if rng.IntN(2) == 0 {
				failed = append(failed, c)
			}
		}
	}
	missingReference := rng.IntN(2) == 0
	var committed float64
	if rng.IntN(2) == 0 {
		committed = rng.Float64() * 0.5
	}
	codes, applied := map[sim.Op][]hnslb.ErrorCode{}, map[sim.Op][]hnslb.ErrorCode{}
	for _, op := range sim.Ops() {
		codes[op] = failed
		if missingReference && (op == sim.OpCreateLoadBalancer || op == sim.OpUpdateLoadBalancer) {
			codes[op] = append(slices.Clone(failed), sim.MissingBackendCodes()...)
		}
		switch {
		case slices.Contains(createsAndModifies, op):
			applied[op] = intersect(failed, AppliedWriteCodes())
		case slices.Contains(deletes, op):
			applied[op] = intersect(failed, LostReplyCodes())
		}
	}
	var twice, leftOut float64
	var getsLeaveOut bool
	if rng.IntN(2) == 0 {
		twice = rng.Float64() * 0.3
	}
	if rng.IntN(2) == 0 {
		leftOut = rng.Float64() * 0.3
		getsLeaveOut = rng.IntN(2) == 0
	}
	return sim.Faults{
		ListedTwice:          twice,
		LeftOutOfListings:    leftOut,
		LeftOutInARow:        2,
		GetsLeaveOut:         getsLeaveOut,
		ErrorRate:            map[sim.Op]float64{sim.AnyOp: rng.Float64() * maxRate},
		Codes:                codes,
		AppliedCodes:         applied,
		Committed:            committed,
		KeptOnDelete:         rng.Float64() * 0.3,
		PartialCreates:       rng.Float64() * 0.3,
		PartialHoldsFrontend: rng.IntN(2) == 0,
	}
}

// The writes by what hcn makes of them: a create or modify is the write,
// then a query of the document HNS holds, then a close (hcsshim
// hcn/hcnloadbalancer.go, hcn/hcnendpoint.go, hcn/hcnnamespace.go); a
// delete is one RPC.
var (
	createsAndModifies = []sim.Op{
		sim.OpCreateLoadBalancer, sim.OpUpdateLoadBalancer, sim.OpCreateEndpoint, sim.OpCreateNetwork,
		sim.OpCreateNamespace, sim.OpAddNamespaceEndpoint, sim.OpRemoveNamespaceEndpoint,
	}
	deletes = []sim.Op{sim.OpDeleteLoadBalancer, sim.OpDeleteEndpoint, sim.OpDeleteNetwork, sim.OpDeleteNamespace}
)

// LostReplyCodes are what a call whose reply never came back answers: HNS
// unavailable, timed out, its manager stopped. Any write may have been
// applied before them.
func LostReplyCodes() []hnslb.ErrorCode {
	return []hnslb.ErrorCode{hnslb.CodeRPCServerUnavailable, hnslb.CodeTimeout, hnslb.CodeManagerStopped}
}

// AppliedWriteCodes are what a create or modify HNS applied may answer: a
// reply lost, or a failure of hcn's query after the write (E_FAIL, access
// denied, a code never seen).
func AppliedWriteCodes() []hnslb.ErrorCode {
	return append(LostReplyCodes(), 0x80004005, 0x5, 0x803b00ff)
}

// StateFreeCodes are the codes of AnyCodes that say nothing of the objects
// a call names: any call may fail with them.
func StateFreeCodes() []hnslb.ErrorCode {
	return slices.DeleteFunc(AnyCodes(), func(c hnslb.ErrorCode) bool { return hnslb.IsNotFound(&hnslb.Error{Code: c}) })
}

func intersect(a, b []hnslb.ErrorCode) []hnslb.ErrorCode {
	var out []hnslb.ErrorCode
	for _, c := range a {
		if slices.Contains(b, c) {
			out = append(out, c)
		}
	}
	return out
}

// AnyCodes are codes HNS may answer any call with, for the tests that hold
// each call correct under every one (docs/reliability.md, "Every code HNS
// may answer"): unavailable, timed out, the manager stopped, "the parameter
// is incorrect", each not-found code, E_FAIL, access denied, and one never
// seen.
func AnyCodes() []hnslb.ErrorCode {
	return []hnslb.ErrorCode{
		hnslb.CodeRPCServerUnavailable, hnslb.CodeTimeout, hnslb.CodeManagerStopped, hnslb.CodeInvalidParameter,
		hnslb.CodeNotFound, hnslb.CodeNetworkNotFound, hnslb.CodeEndpointNotFound,
		0x80004005, // E_FAIL
		0x5,        // ERROR_ACCESS_DENIED
		0x803b00ff, // a code never seen
	}
}
