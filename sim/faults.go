package sim

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// AnyOp in Faults.ErrorRate applies to every operation without its own rate.
const AnyOp Op = "*"

// Faults are errors injected into calls of the code under test.
type Faults struct {
	// ErrorRate is the probability (0..1) that a call of an operation fails.
	ErrorRate map[Op]float64
	// Errors are the codes a failing call draws from; empty means
	// RPCServerUnavailable (HNS unreachable).
	Errors []hnslb.ErrorCode
	// Codes are, per operation, the codes a failing call of it that
	// applied nothing draws from, instead of Errors; AppliedCodes, per
	// write, those a failing write HNS applied (Committed) draws from. A
	// call of an operation Codes names draws first whether it was applied,
	// so which codes come with an applied write is the caller's model; a
	// write without AppliedCodes never fails applied. Operations Codes does
	// not name draw from Errors as before.
	Codes, AppliedCodes map[Op][]hnslb.ErrorCode
	// Committed is the probability (0..1) that an injected failure of a
	// write happened after HNS applied it: the caller sees the error, the
	// object was created, changed or deleted all the same (a timeout on the
	// way back). Zero, the default, means failed calls change nothing.
	Committed float64
	// Hang holds every call of these operations (AnyOp: all) before it
	// reaches HNS's state, and HangReply after HNS applied it, until
	// SetFaults lifts the hang; see hang.go.
	Hang, HangReply []Op
	// TakenPorts are ports on which HNS refuses every new load balancer
	// frontend with "port already exists" (0x803b0013) while no load
	// balancer holds them: a host process's socket on the port (the health
	// check port on Windows Server 2019, kubernetes/community#8883), or a
	// node port's reservation HNS kept after deleting its load balancer
	// (Windows Server 2019 17763.8146, kubernetes/kubernetes#137530).
	TakenPorts []TakenPort
	// ReservedAddresses are addresses on which HNS refuses every new
	// endpoint with "an address provided is invalid or reserved"
	// (0x803b002f) while no endpoint holds them, as it refused an overlay
	// source VIP's endpoint on Windows Server 2004 (kubernetes/kubernetes#100962,
	// kubernetes-sigs/sig-windows-tools#71). What HNS reserves is not
	// published; the fault names the addresses.
	ReservedAddresses []netip.Addr
	// KeptOnDelete is the share (0..1) of load balancer and endpoint
	// deletes that HNS reports done while keeping the object: it stays,
	// listed and holding its frontend or address, until a later delete
	// removes it (each delete draws anew; 1 keeps it for good). HNS kept
	// remote endpoints so, their deletes reported successful, at a high
	// pod churn (microsoft/Windows-Containers#631); whether it keeps load
	// balancers too is not known, so both are modelled.
	KeptOnDelete float64
	// KeptDeletes is how many of the next load balancer and endpoint
	// deletes HNS reports done while keeping the object, before deletes
	// apply again (KeptOnDelete still draws for those): an object a
	// second or a later delete removes, told apart from one kept for good
	// (KeptOnDelete 1) without a draw. How many deletes a kept object
	// outlasts on Windows is not known (microsoft/Windows-Containers#631
	// gives none).
	KeptDeletes int
	// PartialCreates is the share (0..1) of failed load balancer creates
	// after which HNS lists a load balancer without port mappings: the
	// document's frontend VIPs, backends, flags and source VIP. HNS has
	// listed such load balancers, and kube-proxy crashed on them
	// (kubernetes/kubernetes#141488; its fix, #141489, says a load
	// balancer can be left "partially created after hcnCreateLoadBalancer
	// fails"). Which failures leave one is not known: here any failure
	// HNS answered (a timeout included) but a reference it cannot resolve
	// (a backend gone), injected failures included; not HNS being
	// unreachable or stopped, nor a create HNS applied (Committed), which
	// stored the whole document.
	PartialCreates float64
	// PartialHoldsFrontend makes such a load balancer hold the frontend its
	// create asked for, unseen: while it stays, new load balancers there are
	// refused "port already exists" (0x803b0013), as if HNS had programmed
	// the port and lost it from the document. Whether one does is not
	// known; by default it holds nothing.
	PartialHoldsFrontend bool
	// ListedTwice is the share (0..1) of the objects a listing answers
	// twice, the copy right after the object; gets are not affected. No
	// public capture shows it; it is modelled because a listing is an
	// enumeration followed by a read of each object and HNS is not
	// transactional (listingfaults.go).
	ListedTwice float64
	// LeftOutOfListings is the share (0..1) of the objects a listing
	// leaves out though HNS holds them; the next listing draws anew, and
	// gets are not affected. Modelled for the same reason, with no capture.
	LeftOutOfListings float64
	// LeftOutInARow, if above 0, is the most listings in a row that leave
	// out one object; the next lists it. hnsproxy takes an object for gone
	// once three listings in a row left it out where nothing else looks
	// for it (reconciler silentListings), so below three a history that
	// loses an object is hnsproxy's bug, not the chance the rate gives.
	LeftOutInARow int
	// GetsLeaveOut makes a get by ID or by name draw LeftOutOfListings as a
	// listing's object does, one run with the listings' under
	// LeftOutInARow: the object HNS holds is answered not found. hcn's
	// Get*By* is a listing filtered on the ID or the name (its own
	// enumeration, then an open, a query and a close; hnsproxy's client
	// drops an object whose open says not found, as one deleted after the
	// enumeration), so whatever leaves an object out of a listing may
	// leave it out of a get. Off by default: gets find what HNS holds.
	GetsLeaveOut bool
}

// TakenPort is a protocol and port taken outside HNS's load balancers.
type TakenPort struct {
	Protocol uint32
	Port     uint16
}

// ParseTakenPort reads "tcp/PORT" or "udp/PORT".
func ParseTakenPort(s string) (TakenPort, error) {
	proto, portText, ok := strings.Cut(strings.ToLower(s), "/")
	port, err := strconv.ParseUint(portText, 10, 16)
	switch {
	case !ok || err != nil || port == 0:
		return TakenPort{}, fmt.Errorf("taken port %q: want tcp/PORT or udp/PORT, PORT 1..65535", s)
	case proto == "tcp":
		return TakenPort{hnslb.ProtocolTCP, uint16(port)}, nil
	case proto == "udp":
		return TakenPort{hnslb.ProtocolUDP, uint16(port)}, nil
	}
	return TakenPort{}, fmt.Errorf("taken port %q: protocol %q, want tcp or udp", s, proto)
}

// SetFaults replaces the injected faults. Draws come from a generator seeded
// by Options.Seed, so the same calls in the same order fail the same way.
func (h *HNS) SetFaults(f Faults) {
	f.ErrorRate = maps.Clone(f.ErrorRate)
	f.Errors = slices.Clone(f.Errors)
	f.Codes, f.AppliedCodes = cloneCodes(f.Codes), cloneCodes(f.AppliedCodes)
	f.TakenPorts = slices.Clone(f.TakenPorts)
	f.ReservedAddresses = slices.Clone(f.ReservedAddresses)
	h.mu.Lock()
	h.faults = f
	if f.LeftOutInARow <= 0 {
		clear(h.leftOutRuns)
	}
	h.hangs.set(f.Hang, f.HangReply)
	h.hanging.Store(len(f.Hang)+len(f.HangReply) > 0)
	h.mu.Unlock()
}

// Restart simulates an HNS service restart that keeps every object: every
// call fails with RPCServerUnavailable (IsUnavailable, never IsNotFound) for
// d. Restart(0) ends a restart window early.
func (h *HNS) Restart(d time.Duration) {
	_ = h.RestartLosing(d, RestartKeepsAll) // RestartKeepsAll is always valid
}

// RestartLoss is what an HNS restart drops. Which objects HNS brings back
// after its service restarts is not known from any public source, and the
// public reports point both ways: load balancers created again after a
// restart met 0xb7 "already exists", so HNS had kept them
// (kubernetes/kubernetes#139519); endpoints were gone after one
// (projectcalico/calico#5164). So each is a variant (docs/simulator.md,
// "Restart"). Networks and namespaces are always kept.
type RestartLoss string

const (
	// RestartKeepsAll: every object comes back (kubernetes/kubernetes#139519).
	RestartKeepsAll RestartLoss = ""
	// RestartLosesLoadBalancers: load balancers are gone, endpoints kept.
	RestartLosesLoadBalancers RestartLoss = "load-balancers"
	// RestartLosesRemoteEndpoints: load balancers and remote endpoints (what
	// a service proxy makes) are gone; the containers' endpoints are kept.
	RestartLosesRemoteEndpoints RestartLoss = "remote-endpoints"
	// RestartLosesEndpoints: load balancers and every endpoint are gone, the
	// containers' too (projectcalico/calico#5164); namespaces lose their
	// attachments.
	RestartLosesEndpoints RestartLoss = "endpoints"
)

// RestartLosses are the valid RestartLoss values, RestartKeepsAll first.
var RestartLosses = []RestartLoss{RestartKeepsAll, RestartLosesLoadBalancers, RestartLosesRemoteEndpoints, RestartLosesEndpoints}

// RestartLosing simulates an HNS service restart that drops what loss
// names, at once, and then fails every call as Restart does for d.
func (h *HNS) RestartLosing(d time.Duration, loss RestartLoss) error {
	if !slices.Contains(RestartLosses, loss) {
		return fmt.Errorf("unknown restart loss %q (want one of %q)", loss, RestartLosses)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.down = h.clock.Now().Add(d)
	if d > 0 {
		h.restarts++
	}
	if loss == RestartKeepsAll {
		return nil
	}
	for _, id := range slices.Collect(h.state.loadBalancers.ids()) {
		h.state.deleteLoadBalancer(id)
	}
	for _, id := range slices.Collect(h.state.endpoints.ids()) {
		if e, _ := h.state.endpoints.get(id); loss == RestartLosesEndpoints ||
			(loss == RestartLosesRemoteEndpoints && e.IsRemote()) {
			h.removeEndpoint(id)
		}
	}
	return nil
}

// keptOnDelete says whether a delete reported done keeps its object
// (Faults.KeptDeletes, else a draw of Faults.KeptOnDelete), and counts
// it. Called with h.mu held.
func (h *HNS) keptOnDelete(kind, id string) bool {
	switch {
	case h.faults.KeptDeletes > 0:
		h.faults.KeptDeletes--
	case h.faults.KeptOnDelete <= 0 || h.faultRng.Float64() >= h.faults.KeptOnDelete:
		return false
	}
	h.counters.KeptOnDelete++
	h.state.log.printf("kept %s %s on its delete", kind, id)
	return true
}

// leavePartial draws whether a failed create of lb leaves a load balancer
// without port mappings (Faults.PartialCreates), and counts it.
func (h *HNS) leavePartial(lb *hnslb.LoadBalancer, err error) {
	code, ok := hnslb.CodeOf(err)
	if !ok || lb == nil || len(lb.PortMappings) != 1 || code == hnslb.CodeRPCServerUnavailable ||
		code == hnslb.CodeManagerStopped || hnslb.IsMissingReference(err) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.faults.PartialCreates <= 0 || h.faultRng.Float64() >= h.faults.PartialCreates {
		return
	}
	partial := copyLoadBalancer(lb)
	storedGUIDs(partial)
	partial.ID = h.state.ids.guid()
	partial.SchemaVersion = hnslb.V2
	var holds []string
	if h.faults.PartialHoldsFrontend {
		for _, k := range frontendKeys(lb) {
			if _, taken := h.state.frontends[k]; !taken {
				holds = append(holds, k)
			}
		}
	}
	partial.PortMappings = nil
	h.state.putPartialLoadBalancer(partial, holds)
	h.counters.PartialCreates++
}

// gate decides, before a call touches state, whether it fails and, for an
// injected failure of a write, whether the write still happens. Called with
// h.mu held.
func (h *HNS) gate(op Op) (commit bool, err error) {
	if h.clock.Now().Before(h.down) {
		return false, hnsError(op, hnslb.CodeRPCServerUnavailable, "(HNS is restarting)")
	}
	rate, ok := h.faults.ErrorRate[op]
	if !ok {
		rate = h.faults.ErrorRate[AnyOp]
	}
	if rate <= 0 || h.faultRng.Float64() >= rate {
		return false, nil
	}
	codes, perOp := h.faults.Codes[op]
	if perOp {
		applied := h.faults.AppliedCodes[op]
		commit = op.isWrite() && len(applied) > 0 && h.faults.Committed > 0 && h.faultRng.Float64() < h.faults.Committed
		if commit {
			codes = applied
		}
		return commit, hnsError(op, h.drawCode(codes), "(injected fault)")
	}
	code := h.drawCode(h.faults.Errors)
	commit = op.isWrite() && h.faults.Committed > 0 && h.faultRng.Float64() < h.faults.Committed
	return commit, hnsError(op, code, "(injected fault)")
}

// drawCode draws one of codes, RPCServerUnavailable if there are none.
// Called with h.mu held.
func (h *HNS) drawCode(codes []hnslb.ErrorCode) hnslb.ErrorCode {
	if n := len(codes); n > 0 {
		return codes[h.faultRng.IntN(n)]
	}
	return hnslb.CodeRPCServerUnavailable
}

func cloneCodes(m map[Op][]hnslb.ErrorCode) map[Op][]hnslb.ErrorCode {
	if m == nil {
		return nil
	}
	out := make(map[Op][]hnslb.ErrorCode, len(m))
	for op, codes := range m {
		out[op] = slices.Clone(codes)
	}
	return out
}
