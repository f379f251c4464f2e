package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// faultFlags are the fault injection flags shared by serve and faults.
type faultFlags struct {
	errorRates   []string
	errorCodes   []string
	committed    float64
	hang         []string
	hangReply    []string
	takenPorts   []string
	reserved     []string
	keptShare    float64
	keptCount    int
	partial      float64
	holds        bool
	twice        float64
	leftOut      float64
	leftOutRun   int
	getsLeaveOut bool
}

func (f *faultFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.errorRates, "error-rate", nil, `OP=RATE: fail this share (0..1) of an operation's calls; OP "*" is every operation (repeatable)`)
	fs.Float64Var(&f.committed, "committed", 0, "share (0..1) of failed writes HNS applied anyway (the reply was lost)")
	fs.StringSliceVar(&f.errorCodes, "error-code", nil, "HNS code a failing call returns, e.g. 0x6ba (repeatable; default: HNS unavailable)")
	fs.StringSliceVar(&f.hang, "hang", nil, `OP: hold this operation's calls before they reach HNS until faults are set without it; OP "*" is every operation (repeatable)`)
	fs.StringSliceVar(&f.hangReply, "hang-reply", nil, `OP: let HNS apply this operation's calls but hold their replies until faults are set without it (repeatable)`)
	fs.Float64Var(&f.keptShare, "kept-on-delete", 0, "share (0..1) of load balancer and endpoint deletes HNS reports done while keeping the object listed, as microsoft/Windows-Containers#631 reports of remote endpoints")
	fs.IntVar(&f.keptCount, "kept-deletes", 0, "how many of the next load balancer and endpoint deletes HNS reports done while keeping the object listed, before deletes apply again")
	fs.Float64Var(&f.partial, "partial-creates", 0, "share (0..1) of failed load balancer creates that leave a load balancer without port mappings listed, as kubernetes/kubernetes#141488 met")
	fs.BoolVar(&f.holds, "partial-holds-frontend", false, "such a load balancer holds the frontend its create asked for, unseen, until deleted")
	fs.Float64Var(&f.twice, "listed-twice", 0, "share (0..1) of the objects a listing answers twice (no public capture; a listing is not transactional)")
	fs.Float64Var(&f.leftOut, "left-out-of-listings", 0, "share (0..1) of the objects a listing leaves out though HNS holds them (no public capture; gets still find them unless --gets-leave-out)")
	fs.IntVar(&f.leftOutRun, "left-out-in-a-row", 0, "with --left-out-of-listings: the most listings in a row that leave out one object, the next lists it (0: no bound)")
	fs.BoolVar(&f.getsLeaveOut, "gets-leave-out", false, "with --left-out-of-listings: a get by ID or by name leaves the object out too, answering not found (hcn's gets are filtered listings), counted in --left-out-in-a-row's run")
	fs.StringSliceVar(&f.takenPorts, "taken-port", nil, `tcp/PORT or udp/PORT: refuse new load balancer frontends on this port as taken while no load balancer holds it, as a host socket or a reservation HNS kept does (repeatable)`)
	fs.StringSliceVar(&f.reserved, "reserved-address", nil, `IP: refuse new endpoints on this address as invalid or reserved (0x803b002f) while no endpoint holds it, as HNS refused an overlay source VIP on Windows Server 2004 (repeatable)`)
}

func (f *faultFlags) request() (remote.FaultsRequest, error) {
	req := remote.FaultsRequest{ErrorRate: map[string]float64{}, Committed: f.committed, Hang: f.hang, HangReply: f.hangReply, TakenPorts: f.takenPorts, ReservedAddresses: f.reserved, KeptOnDelete: f.keptShare, KeptDeletes: f.keptCount,
		PartialCreates: f.partial, PartialHoldsFrontend: f.holds, ListedTwice: f.twice, LeftOutOfListings: f.leftOut, LeftOutInARow: f.leftOutRun, GetsLeaveOut: f.getsLeaveOut}
	for _, s := range f.errorRates {
		op, rateStr, ok := strings.Cut(s, "=")
		if !ok {
			return req, fmt.Errorf("--error-rate %q: want OP=RATE", s)
		}
		rate, err := strconv.ParseFloat(rateStr, 64)
		if err != nil {
			return req, fmt.Errorf("--error-rate %q: %v", s, err)
		}
		req.ErrorRate[op] = rate
	}
	for _, s := range f.errorCodes {
		c, err := strconv.ParseUint(s, 0, 32)
		if err != nil {
			return req, fmt.Errorf("--error-code %q: %v", s, err)
		}
		req.Errors = append(req.Errors, hnslb.ErrorCode(c))
	}
	return req, nil
}
