package reconciler

import (
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Echo-proof identity. What HNS returns for a load balancer need not be
// what we sent: it may drop flags it does not declare, change GUID case,
// reorder lists, report another schema version (unknown on real HNS; the
// simulator models each way, docs/simulator.md "Echo profiles"). So "ours
// and unchanged" is decided from HNS's own echo: with each owned load
// balancer ID the reconciler keeps a baseline, the fingerprint of the
// document it wrote together with what HNS answered to that write (hcn's
// create and modify return HNS's stored document, queried as a listing
// queries it, so the baseline costs no extra call). A later listing is
// drift only if its fingerprint differs from the baseline. The baseline is
// saved in the state file, so a restart adopts without a write too.
//
// Without a baseline (kube-proxy's load balancers at migration, a lost
// state file, a create whose reply was lost) adoptionMatch decides.

// fingerprint is the baseline of a load balancer: what we wrote and what
// HNS echoed, each in a canonical form that ignores the ID, the schema
// version, GUID case and the order of backends, VIPs and port mappings.
// It is computed on every create and modify: it avoids fmt and allocates
// little (the benchmark BenchmarkUpsertSyncOneOf20k watches it).
func fingerprint(written, echo *hnslb.LoadBalancer) string {
	var stack [2048]byte // a 10,000-Service cold start makes 10,000 of these
	buf := stack[:0]
	buf = appendCanonical(buf, written)
	n := len(buf)
	buf = append(buf, '\n')
	if sameCanonicalInput(written, echo) {
		// HNS echoed what it was sent, as it mostly does: the echo's
		// canonical form is the same bytes, without sorting and folding
		// its backends again.
		buf = append(buf, buf[:n]...)
	} else {
		buf = appendCanonical(buf, echo)
	}
	// FNV-1a, 64 bits: the baseline guards against accidents, not attacks.
	h := uint64(14695981039346656037)
	for _, c := range buf {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return strconv.FormatUint(h, 16)
}

// sameCanonicalInput reports whether a and b agree, as written, on every
// field appendCanonical reads.
func sameCanonicalInput(a, b *hnslb.LoadBalancer) bool {
	return sameFrontendFields(a, b) && slices.Equal(a.HostComputeEndpoints, b.HostComputeEndpoints)
}

func appendCanonical(buf []byte, lb *hnslb.LoadBalancer) []byte {
	buf = strconv.AppendUint(append(buf, 'f'), uint64(lb.Flags), 10)
	buf = appendCanonicalIP(append(buf, " s"...), lb.SourceVIP)
	vips := lb.FrontendVIPs
	if len(vips) > 1 {
		vips = make([]string, len(lb.FrontendVIPs))
		for i, v := range lb.FrontendVIPs {
			vips[i] = canonicalIP(v)
		}
		slices.Sort(vips)
	}
	for _, v := range vips {
		buf = appendCanonicalIP(append(buf, " v"...), v)
	}
	pms := lb.PortMappings
	if len(pms) > 1 {
		pms = slices.SortedFunc(slices.Values(pms), func(a, b hnslb.PortMapping) int {
			return cmp.Or(cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.ExternalPort, b.ExternalPort),
				cmp.Compare(a.InternalPort, b.InternalPort), cmp.Compare(a.DistributionType, b.DistributionType),
				cmp.Compare(a.Flags, b.Flags))
		})
	}
	for _, pm := range pms {
		buf = append(buf, " p"...)
		for i, n := range [...]uint64{uint64(pm.Protocol), uint64(pm.InternalPort), uint64(pm.ExternalPort), uint64(pm.DistributionType), uint64(pm.Flags)} {
			if i > 0 {
				buf = append(buf, '/')
			}
			buf = strconv.AppendUint(buf, n, 10)
		}
	}
	return appendBackendIDs(buf, lb.HostComputeEndpoints)
}

// appendBackendIDs appends " b" and each ID lowercased, in the order of
// their lowercased forms (as lowerSorted gives them). For ASCII IDs (HNS's
// are GUIDs) it sorts with a case-folding comparison and lowercases while
// appending, allocating nothing for up to 16 backends: lowerSorted's
// copies were most of a cold start's 10,000 fingerprints.
func appendBackendIDs(buf []byte, ids []string) []byte {
	var small [16]string
	var sorted []string
	if slices.ContainsFunc(ids, notASCII) {
		sorted = lowerSorted(ids)
	} else {
		sorted = append(small[:0], ids...)
		slices.SortFunc(sorted, compareFoldedASCII)
	}
	for _, id := range sorted {
		buf = append(buf, " b"...)
		for i := 0; i < len(id); i++ {
			buf = append(buf, lowerASCII(id[i]))
		}
	}
	return buf
}

func notASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// compareFoldedASCII orders ASCII strings as their lowercased forms order.
func compareFoldedASCII(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if x, y := lowerASCII(a[i]), lowerASCII(b[i]); x != y {
			return cmp.Compare(x, y)
		}
	}
	return cmp.Compare(len(a), len(b))
}

// appendCanonicalIP appends an address's canonical text, or s itself if it is none.
func appendCanonicalIP(buf []byte, s string) []byte {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.AppendTo(buf)
	}
	return append(buf, s...)
}

// canonicalIP is an address's canonical text, or s itself if it is none.
func canonicalIP(s string) string {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.String()
	}
	return s
}

// Flags whose echo no public capture shows: a load balancer without a
// baseline may lack them in HNS's answer and still be adopted. Port-mapping
// flag 2 (LocalRoutedVIP) is seen echoed (projectcalico/calico#7305), and
// the DSR flag is kept by HNS (the v1 view shows IsDSR,
// projectcalico/calico#8465): both are trusted.
const (
	unconfirmedPortFlags = hnslb.PortMappingFlagsILB | hnslb.PortMappingFlagsUseMux |
		hnslb.PortMappingFlagsPreserveDIP | hnslb.PortMappingFlagsVipExternalIP
	unconfirmedLBFlags = hnslb.LoadBalancerFlagsIPv6
)

// adoptionMatch reports whether a load balancer listed in HNS (echo), for
// which no baseline is known, serves the document we would write (want) on
// the same frontend key. It trusts what decides where packets go and what
// public captures show HNS echoing as sent: protocol, ports, distribution,
// frontend VIPs and source VIP (as addresses), the backend set (GUIDs case
// folded), port-mapping flag LocalRoutedVIP and the DSR flag. It tolerates
// what HNS may not echo: the ID, the schema version, order, and a flag of
// unconfirmedPortFlags or unconfirmedLBFlags that we set and the echo lacks.
// A flag in the echo that we do not set is never tolerated: HNS does not
// invent flags, so it is another agent's different load balancer.
func adoptionMatch(echo, want *hnslb.LoadBalancer) bool {
	if len(echo.PortMappings) != 1 || len(want.PortMappings) != 1 {
		return false
	}
	e, w := echo.PortMappings[0], want.PortMappings[0]
	if e.Protocol != w.Protocol || e.InternalPort != w.InternalPort || e.ExternalPort != w.ExternalPort ||
		e.DistributionType != w.DistributionType {
		return false
	}
	if !EchoedFlags(echo, want) {
		return false
	}
	return SameAddress(echo.SourceVIP, want.SourceVIP) &&
		sameAddrSet(echo.FrontendVIPs, want.FrontendVIPs) &&
		sameIDSet(echo.HostComputeEndpoints, want.HostComputeEndpoints)
}

// EchoedFlags reports whether the flags of echo, a load balancer of one
// port mapping as HNS lists it, are those of want as HNS may echo them: no
// flag want lacks, and of want's only those HNS may not echo missing. It is
// adoptionMatch's rule for flags, for readers that judge a listing
// (hnsproxy-diag).
func EchoedFlags(echo, want *hnslb.LoadBalancer) bool {
	if len(echo.PortMappings) != 1 || len(want.PortMappings) != 1 {
		return false
	}
	return flagsMatch(echo.PortMappings[0].Flags, want.PortMappings[0].Flags, unconfirmedPortFlags) &&
		flagsMatch(echo.Flags, want.Flags, unconfirmedLBFlags)
}

// SameAddress reports whether two IP addresses as HNS documents write them
// are the same address, whatever their text form.
func SameAddress(a, b string) bool { return canonicalIP(a) == canonicalIP(b) }

// flagsMatch: the echo carries no flag we do not set, and lacks only
// tolerated ones of those we set.
func flagsMatch[F ~uint32](echo, want, tolerated F) bool {
	return echo&^want == 0 && (want&^echo)&^tolerated == 0
}

func sameAddrSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	ca, cb := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		ca[i], cb[i] = canonicalIP(a[i]), canonicalIP(b[i])
	}
	slices.Sort(ca)
	slices.Sort(cb)
	return slices.Equal(ca, cb)
}

// unchanged reports whether listed, a load balancer found in HNS, is what
// HNS answered when we wrote written: by its baseline if we have one, else
// by adoptionMatch.
func (r *Reconciler) unchanged(written, listed *hnslb.LoadBalancer) bool {
	same, _ := r.judge(written, listed)
	return same
}

// judge is unchanged, and says too whether listed should become the
// baseline (rebase): there is none, or an echo change (echoChanged)
// explains the difference. A drift repair asks it of every owned load
// balancer, so the fingerprint is computed once per judgement.
func (r *Reconciler) judge(written, listed *hnslb.LoadBalancer) (same, rebase bool) {
	if b, ok := r.baselines[listed.ID]; ok {
		if fingerprint(written, listed) == b {
			return true, false
		}
		return echoChanged(written, listed, b), true
	}
	if _, judged := r.unansweredSent(listed.ID); judged && distributionUnanswered(listed, written) {
		return false, true
	}
	return adoptionMatch(listed, written), true
}

// distributionUnanswered reports a listing of one of hnsproxy's load
// balancers, claimed at Start with no baseline, that cannot show whether
// it is written's: it answers no distribution where written has none, and
// HNS may answer a sticky load balancer without its distribution
// (docs/simulator.md, echo drop-distribution). The create hnsproxy did not
// live to record may have been sent sticky, the Service's affinity turned
// off while hnsproxy was down; taken as unchanged it would stay sticky
// until its Service next changes (found by the overlay fault soak, seed 1,
// --echo=all). Its declaration records what that create sent
// (sentdecl.go, unansweredSent): sent sticky, it is not unchanged, and is
// rewritten (a replacement: hnsproxy modifies backends only);
// sent without affinity, adoptionMatch judges it as listed. A declaration
// without a record is judged so only where HNS modifies load balancers
// (docs/reliability.md, "Echo-proof identity").
// readUnanswered is listed, one of hnsproxy's adopted to be updated into
// written, read with the distribution it may have been sent with where
// distributionUnanswered holds, so that the Sync writes written's (a
// replacement: modify changes backends only); else listed itself.
func (r *Reconciler) readUnanswered(listed, written *hnslb.LoadBalancer) *hnslb.LoadBalancer {
	d, judged := r.unansweredSent(listed.ID)
	if !judged || !distributionUnanswered(listed, written) {
		return listed
	}
	read := *listed
	read.PortMappings = []hnslb.PortMapping{listed.PortMappings[0]}
	read.PortMappings[0].DistributionType = d
	return &read
}

// echoChanged reports whether listed is the load balancer the baseline b
// was taken for, written as written, with HNS now answering otherwise
// than it did then: a flag no capture shows echoed (unconfirmedPortFlags,
// unconfirmedLBFlags; VipExternalIP, which hcn does not declare, alone)
// or the distribution answered where it was not, or not where it was.
// How HNS answers may change with an update of the node, as the fields of
// its v1 view did between builds (docs/simulator.md, "Echo profiles");
// taken for drift, every such load balancer was replaced at the first
// start after the update, a moment without its frontend where HNS cannot
// modify. The baseline's written half still has to match: a load balancer
// written otherwise (the old one HNS kept after its delete, a Service
// changed) is never explained so.
func echoChanged(written, listed *hnslb.LoadBalancer, b string) bool {
	if len(listed.PortMappings) != 1 || len(written.PortMappings) != 1 {
		return false
	}
	pm, wpm := listed.PortMappings[0], written.PortMappings[0]
	then := *listed
	then.PortMappings = []hnslb.PortMapping{pm}
	for _, pf := range [...]hnslb.PortMappingFlags{pm.Flags,
		pm.Flags | wpm.Flags&unconfirmedPortFlags, pm.Flags &^ (wpm.Flags & unconfirmedPortFlags),
		pm.Flags | wpm.Flags&hnslb.PortMappingFlagsVipExternalIP, pm.Flags &^ (wpm.Flags & hnslb.PortMappingFlagsVipExternalIP)} {
		for _, lf := range [...]hnslb.LoadBalancerFlags{listed.Flags,
			listed.Flags | written.Flags&unconfirmedLBFlags, listed.Flags &^ (written.Flags & unconfirmedLBFlags)} {
			for _, d := range [...]hnslb.Distribution{pm.DistributionType, wpm.DistributionType, hnslb.DistributionNone} {
				then.Flags, then.PortMappings[0].Flags, then.PortMappings[0].DistributionType = lf, pf, d
				if fingerprint(written, &then) == b {
					return true
				}
			}
		}
	}
	return false
}

func distributionUnanswered(listed, written *hnslb.LoadBalancer) bool {
	return len(listed.PortMappings) == 1 && len(written.PortMappings) == 1 &&
		listed.PortMappings[0].DistributionType == hnslb.DistributionNone &&
		written.PortMappings[0].DistributionType == hnslb.DistributionNone
}

// ownLB records id as ours with the baseline of written and HNS's answer
// echo. A new ID is journaled with its baseline in one record (an older
// hnsproxy reads the baseline-less part: "owned"). A new baseline of an ID
// already owned (a modify, an adoption) waits for the next state write, or
// the first after a Repair (saveState): a modify costs no fsync, and a
// crash before that write costs one rewrite of that load balancer at the
// next start. Without an echo (a client that answered no document) the
// baseline is forgotten; the next Repair sets one from its listing if
// adoptionMatch accepts it.
func (r *Reconciler) ownLB(id string, written, echo *hnslb.LoadBalancer) {
	// A load balancer HNS kept after its delete, adopted for a key again
	// (its create refused as taken, the lookup found it identical), is in
	// use: no Repair may settle that delete by deleting it again.
	delete(r.unconfirmed.byID, id)
	isNew := addNew(r.ownedLBs, id)
	if isNew {
		r.listing.noteOwned(id)
	}
	b := ""
	if echo != nil {
		b = fingerprint(written, echo)
	}
	changed := b != "" && r.baselines[id] != b
	switch {
	case changed:
		r.baselines[id] = b
	case b == "":
		delete(r.baselines, id)
	}
	switch {
	case isNew:
		delete(r.unsavedBaselines, id)
		r.journal(journalRecord{Add: true, Kind: recordLoadBalancer, ID: id, Baseline: b})
	case changed && r.opts.StateFile != "":
		r.unsavedBaselines[id] = struct{}{}
	}
}

// queueBaselines moves the baselines waiting for a state write into the
// journal's queue.
func (r *Reconciler) queueBaselines() {
	for id := range r.unsavedBaselines {
		if b, ok := r.baselines[id]; ok {
			r.journal(journalRecord{Add: true, Kind: recordLoadBalancer, ID: id, Baseline: b})
		}
	}
	clear(r.unsavedBaselines)
}
