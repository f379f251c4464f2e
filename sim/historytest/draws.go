// Package historytest holds what the random histories of several packages
// draw about HNS: how it echoes, which codes it answers with, which
// faults it has; and the codes the tests of every call answer it with
// (AnyCodes).
package historytest

import (
	"math/rand/v2"
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
// leave a load balancer without port mappings.
func RandomFaults(rng *rand.Rand, maxRate float64) sim.Faults {
	// Only a failure on the way back may have been applied: HNS
	// refusing a document (invalid parameter) applied nothing.
	codes := []hnslb.ErrorCode{hnslb.CodeRPCServerUnavailable, hnslb.CodeTimeout, hnslb.CodeManagerStopped}
	codes = codes[:1+rng.IntN(len(codes))]
	var committed float64
	if rng.IntN(2) == 0 {
		committed = rng.Float64() * 0.5
	} else {
		codes = append(codes, hnslb.CodeInvalidParameter)
	}
	return sim.Faults{
		ErrorRate:            map[sim.Op]float64{sim.AnyOp: rng.Float64() * maxRate},
		Errors:               codes,
		Committed:            committed,
		KeptOnDelete:         rng.Float64() * 0.3,
		PartialCreates:       rng.Float64() * 0.3,
		PartialHoldsFrontend: rng.IntN(2) == 0,
	}
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
