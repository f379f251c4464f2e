package reconciler

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/internal/atomicfile"
)

// stateFileVersion is the schema of the state file.
const stateFileVersion = 1

// stateFile is what hnsproxy persists on the node: the HNS IDs it owns.
type stateFile struct {
	Version         int      `json:"version"`
	LoadBalancers   []string `json:"loadBalancers"`
	RemoteEndpoints []string `json:"remoteEndpoints"`
	// LoadBalancerBaselines maps owned load balancer IDs to their baselines
	// (baseline.go). Added without a version change: an older hnsproxy
	// ignores it, and its next snapshot drops it; this one then adopts
	// those load balancers by adoptionMatch and sets their baselines anew.
	LoadBalancerBaselines map[string]string `json:"loadBalancerBaselines,omitempty"`
	// CreatingLoadBalancers and CreatingRemoteEndpoints are written before
	// creates whose IDs might never reach this file (hnsproxy killed
	// mid-Sync, a reply lost on the way back): at Start, an object nobody
	// owns on such a key or IP is claimed as ours.
	CreatingLoadBalancers []intent.LBKey `json:"creatingLoadBalancers,omitempty"`
	// CreatingLoadBalancersSent is, for each of CreatingLoadBalancers in
	// order, the distribution its create sent, "" where not recorded
	// (sentdecl.go). Added without a version change: an older hnsproxy
	// ignores it, and drops it.
	CreatingLoadBalancersSent []string `json:"creatingLoadBalancersSent,omitempty"`
	CreatingRemoteEndpoints   []string `json:"creatingRemoteEndpoints,omitempty"`
	// Takeover is the last Options.Takeover token a Start acted on.
	Takeover string `json:"takeover,omitempty"`
	// DeletedLoadBalancers and DeletedRemoteEndpoints were ours until HNS
	// reported their deletes done, which no listing has confirmed yet
	// (deleted.go): Start counts them as owned. Added without a version
	// change: an older hnsproxy ignores them.
	DeletedLoadBalancers   []string `json:"deletedLoadBalancers,omitempty"`
	DeletedRemoteEndpoints []string `json:"deletedRemoteEndpoints,omitempty"`
	// FailedLoadBalancerCreates are load balancer creates HNS refused that
	// no listing has looked for a load balancer left by since (partial.go).
	// Added without a version change: an older hnsproxy ignores them.
	FailedLoadBalancerCreates []string `json:"failedLoadBalancerCreates,omitempty"`
	// Networks are the HNS networks (IDs) the owned endpoints may be on:
	// the one hnsproxy used, and any other where endpoints of its were
	// still to be deleted (othernetwork.go). Written with each snapshot
	// (a process uses one network); added without a version change: an
	// older hnsproxy ignores it, and drops it. Absent means not known,
	// never "all on the network in use" (othernetwork.go).
	Networks []string `json:"networks,omitempty"`
	// LearnedBackendCap is the backend cap HNS was found to enforce and
	// the build it was learned on (backendcap.go). Added without a version
	// change: an older hnsproxy ignores it, and learns the cap again.
	LearnedBackendCap *learnedCapRecord `json:"learnedBackendCap,omitempty"`
	// TakeoverPending: the Start that wrote this took over (a first start,
	// lost ownership, a new token) and its first Sync has not ended, so
	// the next Start takes over too: a kill in between must not turn the
	// takeover into an ordinary start, after which the load balancers it
	// was to replace are another agent's for good. Added without a
	// version change: an older hnsproxy ignores it.
	TakeoverPending bool `json:"takeoverPending,omitempty"`
	// Journal is the generation of the journal that continues this
	// snapshot: the ID of that journal's first commit record. A journal
	// that begins otherwise is older than the snapshot (one a compaction
	// could not remove, or a crash kept): replaying it would undo what the
	// snapshot folded in since, a withdrawn declaration among it. Empty
	// (an older hnsproxy's snapshot): any journal replays. Added without a
	// version change: an older hnsproxy ignores it, and its commit records
	// ignore the ID.
	Journal string `json:"journal,omitempty"`

	// fresh: there was no usable state (no snapshot, or a corrupt one set
	// aside): a first start on this node, or one that lost what it owned.
	fresh bool

	// snapshotLost: a journal was replayed without its snapshot.
	snapshotLost bool

	// journalStopped is what the journal's replay skipped: torn or corrupt
	// lines, or (a *corruptStateError) the whole journal.
	journalStopped error

	// newerRecords counts the journal records replay skipped as a newer
	// hnsproxy's (errNewerKind).
	newerRecords int

	// staleJournal: the journal beside the snapshot is of an earlier
	// generation (Journal) and was not replayed.
	staleJournal bool
}

// loadStateFrom reads the state file: the snapshot, then its journal
// replayed over it. A missing snapshot (or path "") is an empty state; a
// corrupt snapshot is a *corruptStateError; any other failure to read
// either file is returned as it is. Damage inside the journal is not an
// error: replay skips it (journal.go), and journalStopped says what it
// skipped.
func loadStateFrom(fsys stateFS, path string) (*stateFile, error) {
	if path == "" {
		return &stateFile{Version: stateFileVersion, fresh: true}, nil
	}
	s := &stateFile{Version: stateFileVersion}
	raw, err := readStateFile(fsys, path)
	noSnapshot := errors.Is(err, fs.ErrNotExist)
	switch {
	case noSnapshot:
	case err != nil:
		return nil, asCorrupt(path, err)
	default:
		if err := json.Unmarshal(raw, s); err != nil {
			return nil, &corruptStateError{path, fmt.Errorf("parse state file %s: %w", path, err)}
		}
		switch {
		case s.Version > stateFileVersion:
			// A downgrade: the newer format is not this version's to read.
			return nil, &corruptStateError{path, fmt.Errorf("state file %s: unknown version %d, written by a newer hnsproxy (this one reads version %d)", path, s.Version, stateFileVersion)}
		case s.Version != stateFileVersion:
			return nil, &corruptStateError{path, fmt.Errorf("state file %s: unknown version %d", path, s.Version)}
		}
	}
	sets := setsOf(s)
	applied, stopped, err := replayJournal(fsys, journalPath(path), sets, s.Journal)
	if errors.Is(err, errStaleJournal) {
		s.staleJournal = true
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if applied == 0 && stopped == nil {
		s.fresh = noSnapshot // and an empty journal: nothing was ever recorded
		s.newerRecords = sets.newer
		return s, nil
	}
	out := sets.file()
	out.Takeover, out.Networks, out.journalStopped, out.newerRecords = s.Takeover, s.Networks, stopped, sets.newer
	out.LearnedBackendCap, out.TakeoverPending, out.Journal = s.LearnedBackendCap, s.TakeoverPending, s.Journal
	// A journal without its snapshot (removed by hand, or set aside as
	// corrupt by a version that left the journal: loadOwned now takes it
	// along) holds only the changes since that snapshot: what the snapshot
	// held is lost, as with no state at all.
	out.fresh, out.snapshotLost = noSnapshot, noSnapshot
	return out, nil
}

// journal queues a state change for the next saveState. A queue the next
// save would not append is dropped and a snapshot, written from memory,
// made due instead: one that would pass compactAfter (that save would
// compact anyway), or one longer than half of it (a record's line is about
// twice an ID's share of a snapshot, so the snapshot writes no more). So a
// cold start never keeps its 90,000 records (a sixth of its allocations).
func (r *Reconciler) journal(rec journalRecord) {
	if r.opts.StateFile == "" {
		return
	}
	r.undurableDeclaration = r.undurableDeclaration || rec.Add && (rec.Kind == recordCreatingLB || rec.Kind == recordCreatingEndpoint)
	if r.snapshotDue {
		return
	}
	r.unsaved = append(r.unsaved, rec)
	limit := compactAfter(len(r.ownedLBs) + len(r.ownedEPs))
	if r.journalLines+len(r.unsaved) > limit || len(r.unsaved) > limit/2 {
		r.unsaved, r.snapshotDue = nil, true
	}
}

// saveState makes the queued state changes durable, and any written
// before without an fsync: appended to the journal with one fsync, or,
// once the journal has outgrown the owned set, folded with it into a new
// snapshot. On failure they stay queued for the next try. Every write's
// outcome goes to noteStateWrite.
func (r *Reconciler) saveState() error { return r.save(true) }

// writeState appends the queued state changes to the journal without an
// fsync: in the file for any reader and for a restart after hnsproxy is
// killed (the kernel holds the written bytes), durable against the node
// losing power only at the next saveState. Every record it may carry is
// safe to lose with the power: its object is gone (a disown), or was made
// on a key or IP whose declaration is durable and is claimed through it
// (see declareCreates), or it withdraws a declaration. Only the last may
// not wait long: a declaration that comes back with the power could make
// the restart claim another agent's load balancer on a tenant's frontend,
// so the next Sync's first write makes a withdrawal durable
// (unsyncedWithdrawal; docs/reliability.md, "The state file across
// crashes").
func (r *Reconciler) writeState() error { return r.save(false) }

// reusable is s emptied for the next Sync's records or lines, unless it
// grew past limit (a Sync of thousands of objects): an append's queue and
// its lines were most of what a change allocated in the state layer, and
// neither is worth holding once it is large.
func reusable[T any](s []T, limit int) []T {
	if cap(s) > limit {
		return nil
	}
	return s[:0]
}

// What a change's append may keep for the next: about 100 KB each.
const (
	reusedRecords   = 1024
	reusedLineBytes = 128 << 10
)

func (r *Reconciler) save(durable bool) error {
	if r.opts.StateFile == "" {
		return nil
	}
	if len(r.unsaved) > 0 || r.snapshotDue || r.baselinesDue {
		r.queueBaselines() // they ride along with a write due anyway
		r.baselinesDue = false
	}
	if len(r.unsaved) == 0 && !r.snapshotDue {
		if durable && r.unsynced {
			return r.noteStateWrite(r.syncJournal())
		}
		return nil
	}
	if r.snapshotDue || r.appendFailed || r.journalLines+len(r.unsaved) > compactAfter(len(r.ownedLBs)+len(r.ownedEPs)) {
		err := r.writeCompaction()
		// After a failed append a snapshot replaces a journal that cannot
		// be appended to (a planted link); but on a nearly full disk a
		// snapshot needs more room than an append: try each in turn.
		r.appendFailed = false
		return r.noteStateWrite(err)
	}
	withdraws := slices.ContainsFunc(r.unsaved, isWithdrawal)
	r.unsaved = append(r.unsaved, commitRecord)
	lines := appendLines(r.store.lines[:0], r.unsaved)
	r.unsaved = r.unsaved[:len(r.unsaved)-1]
	r.store.lines = reusable(lines, reusedLineBytes)
	if err := r.store.appendJournal(r.stateFS(), journalPath(r.opts.StateFile), lines, durable); err != nil {
		r.appendFailed = true
		// An outcome appended before without an fsync may be lost with it:
		// only a snapshot of the whole state is sure to hold it.
		r.snapshotDue = r.snapshotDue || r.unsynced && errors.Is(err, errFsync)
		return r.noteStateWrite(err)
	}
	r.journalLines += len(r.unsaved)
	clear(r.unsaved) // no IDs or keys kept alive by the spare room
	r.unsaved = reusable(r.unsaved, reusedRecords)
	r.unsynced = !durable // an fsync makes every earlier append durable too
	r.unsyncedWithdrawal = !durable && (r.unsyncedWithdrawal || withdraws)
	r.undurableDeclaration = r.undurableDeclaration && !durable
	return r.noteStateWrite(nil)
}

// isWithdrawal reports a record that withdraws a declaration which the
// next Sync must make durable: any but an allocated frontend's key.
func isWithdrawal(rec journalRecord) bool {
	return !rec.Add && !rec.allocated && (rec.Kind == recordCreatingLB || rec.Kind == recordCreatingEndpoint)
}

// syncJournal makes the journal's appends durable. When the fsync fails,
// the kernel may have dropped the unsynced bytes from its cache: the next
// save writes the whole state as a snapshot, and until then nothing is
// created (declareCreates).
func (r *Reconciler) syncJournal() error {
	path := journalPath(r.opts.StateFile)
	var err error
	if f := r.store.heldJournal(r.stateFS(), path); f != nil {
		if err = f.Sync(); err != nil {
			r.store.closeJournal()
		}
	} else if f, err = r.stateFS().OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		r.snapshotDue = true
		return err
	}
	r.unsynced, r.unsyncedWithdrawal, r.undurableDeclaration = false, false, false
	return nil
}

// compactState writes the whole state as a new snapshot, then empties the
// journal. The snapshot names the generation of the journal that continues
// it (stateFile.Journal), so an old journal a crash between the two kept,
// or one that could not be removed, is never replayed over it. While the
// journal cannot be removed, every save writes a snapshot: an append to the
// old journal would be lost with it.
func (r *Reconciler) compactState() error {
	if r.opts.StateFile == "" {
		return nil
	}
	return r.noteStateWrite(r.writeCompaction())
}

func (r *Reconciler) writeCompaction() error {
	if err := r.writeSnapshot(); err != nil {
		return err
	}
	r.unsaved, r.snapshotDue, r.unsynced, r.unsyncedWithdrawal, r.undurableDeclaration = nil, false, false, false, false
	r.store.closeJournal() // its appends are in the snapshot
	path := journalPath(r.opts.StateFile)
	if err := r.retireJournal(path); err != nil {
		r.snapshotDue = true
		return err
	}
	r.journalLines = 0
	// The next journal is begun here, its first line synced: creating the
	// file and its first block was the dearest part of the first change
	// after a compaction (a cold start ends with one). Should it fail, the
	// next append creates it and reports what fails then.
	_ = r.store.appendJournal(r.stateFS(), path, nil, true)
	return nil
}

// writeSnapshot writes the owned IDs atomically: a new temp file in the
// same directory (O_EXCL: never a planted one), synced, mode 0600, renamed
// over the old one.
func (r *Reconciler) writeSnapshot() error {
	path := r.opts.StateFile
	if path == "" {
		return nil
	}
	declared := r.declaredKeys()
	s := &stateFile{
		Version: stateFileVersion,
		// Unsorted: sorting 20k IDs on every write costs more than it helps.
		LoadBalancers:             slices.Collect(maps.Keys(r.ownedLBs)),
		RemoteEndpoints:           slices.Collect(maps.Keys(r.ownedEPs)),
		LoadBalancerBaselines:     r.baselines,
		CreatingLoadBalancers:     declared,
		CreatingLoadBalancersSent: sentFor(declared, r.declaredSent),
		CreatingRemoteEndpoints:   r.declaredIPs(),
		Takeover:                  r.takeoverToken,
		DeletedLoadBalancers:      r.unconfirmed.ids(recordLoadBalancer),
		DeletedRemoteEndpoints:    r.unconfirmed.ids(recordRemoteEndpoint),
		Networks:                  r.endpointNetworks(),
		LearnedBackendCap:         r.learnedCapRecord(),
		TakeoverPending:           r.takeover,
		Journal:                   strconv.FormatUint(rand.Uint64(), 36),
	}
	if len(r.failedLBs) > 0 {
		s.FailedLoadBalancerCreates = slices.Collect(maps.Keys(r.failedLBs))
	}
	// Room for what a GUID, a baseline and a key take, so the buffer is
	// not grown (and copied) on the way.
	size := 64 + 40*(len(s.LoadBalancers)+len(s.RemoteEndpoints)+len(s.CreatingRemoteEndpoints)+len(r.unconfirmed.byID)) +
		60*len(s.LoadBalancerBaselines) + 68*len(s.CreatingLoadBalancers)
	raw := appendSnapshot(make([]byte, 0, size), s)
	fsys := r.stateFS()
	dir := filepath.Dir(path)
	if err := fsys.MkdirAll(dir); err != nil {
		return err
	}
	tmp := filepath.Join(dir, filepath.Base(path)+".tmp"+strconv.FormatUint(rand.Uint64(), 36))
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer fsys.Remove(tmp) // no-op after a successful rename
	if err := atomicfile.Fill(f, raw, 0o600); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return err
	}
	r.store.journalGen = s.Journal
	return nil
}

// declareCreates saves, before this Sync writes anything, every key and IP
// it may create (with those still uncertain), when that set grew: those of
// its work, the keys of load balancers waiting for an endpoint it may
// create, and those of load balancers using an endpoint it may replace
// (removeEP rewrites them). Without it a crash between a create and the
// state file write, or a lost reply followed by a crash, leaves an object
// no one owns: a leak for good. The same save makes every earlier append durable, which a
// withdrawal among them needs (writeState). It reports whether the state
// file durably holds every declaration (and every withdrawal): when not (a
// full disk, a failed fsync), the caller creates nothing, since what it
// cannot record it could lose.
//
// A key a foreign load balancer holds is not declared: an interrupted
// Sync must never make the next Start claim that one as ours. Its retry
// declares it once the foreign one is gone (createLB). A standing key is
// declared already.
func (r *Reconciler) declareCreates(lbs map[intent.LBKey]struct{}, ips []string, unchecked map[intent.LBKey]struct{}) (durable bool) {
	if r.opts.StateFile == "" {
		return true
	}
	grew := false
	declareLB := func(k intent.LBKey) {
		e := r.lbs[k]
		// With ModifyLoadBalancer a realized one whose backends alone
		// change is changed in place.
		if e == nil || e.desired == nil || r.modifiesInPlace(e) || r.foreignHeld[k] != "" || has(unchecked, k) {
			return
		}
		if has(r.standingLBs, k) {
			if !r.stands(e) { // no longer a frontend that may stand: this Sync's alone
				delete(r.standingLBs, k)
				r.creatingLBs[k] = struct{}{}
			}
		} else if addNew(r.creatingLBs, k) {
			delete(r.declaredSent, k) // a withdrawn declaration's: journal this one
		}
		// Declared again where its create sends another distribution.
		grew = r.declareSent(k, e) || grew
	}
	for k := range lbs {
		declareLB(k)
	}
	for _, ip := range ips {
		if ep := r.eps[ip]; ep != nil && ep.desired() && (ep.id == "" || !remoteMatches(ep.spec, ep.realizedSpec)) {
			// Where HNS keeps our names, the endpoint's own name marks it ours (names.go).
			// A declaration claims remote endpoints only (claimInterrupted,
			// claimCarried): the source VIP's local endpoint is adopted by the
			// create that meets it (syncep.go), and declared, its address
			// would claim another program's remote endpoint made there after
			// a kill, Calico_ep (borrowedvip.go).
			if r.declaresEndpoints() && !ep.spec.Local && addNew(r.creatingEPs, ip) {
				r.journal(journalRecord{Add: true, Kind: recordCreatingEndpoint, ID: ip})
				grew = true
			}
			// The load balancers that left this backend out are synced
			// again once its endpoint exists (syncWantedEP), due or not.
			for k := range r.waiting[ip] {
				declareLB(k)
			}
			// Those using the endpoint it replaces are rewritten without
			// it first (removeEP), due or not.
			if ep.id != "" {
				for _, u := range r.refs[ep.id] {
					declareLB(u.key)
				}
			}
		}
	}
	if grew || len(r.unsaved) > 0 || r.snapshotDue || r.unsyncedWithdrawal {
		if err := r.saveState(); err != nil {
			r.logStateWriteFailed(err, "Writing hnsproxy state file failed: creating no HNS objects until it works")
		}
	}
	return len(r.unsaved) == 0 && !r.snapshotDue && !r.unsyncedWithdrawal
}

// declareNow makes one key's declaration, with the distribution its
// create sends, durable before that create.
func (r *Reconciler) declareNow(k intent.LBKey) error {
	e := r.lbs[k]
	if r.opts.StateFile == "" || e == nil || e.desired == nil {
		return nil
	}
	if !has(r.standingLBs, k) && addNew(r.creatingLBs, k) {
		delete(r.declaredSent, k)
	}
	if !r.declareSent(k, e) {
		return nil
	}
	return r.saveState()
}

// undeclare drops a key's declaration at once: its create found a foreign
// load balancer in place, which an interrupted Sync must not make ours.
func (r *Reconciler) undeclare(k intent.LBKey) {
	if _, ok := r.creatingLBs[k]; !ok || r.opts.StateFile == "" {
		return
	}
	delete(r.creatingLBs, k)
	r.withdrawDeclaration(k, false)
	if err := r.saveState(); err != nil {
		r.logStateWriteFailed(err, "Writing hnsproxy state file failed")
	}
}

// settleCreates keeps, after a Sync, only the keys and IPs whose create is
// still uncertain, in new maps: the declarations of a cold start fill them
// with every key (Expect sizes them so), and a map does not shrink, so every
// later Sync would walk that size again. Keys that may stand move to
// standingLBs; those of work that may no longer stand are withdrawn.
func (r *Reconciler) settleCreates(work map[intent.LBKey]struct{}) {
	for k := range work {
		if has(r.standingLBs, k) && !r.stands(r.lbs[k]) {
			delete(r.standingLBs, k)
			if e := r.lbs[k]; e != nil && e.uncertain != nil {
				// Its create may have landed: the declaration is what lets
				// a restart claim it, so it stays until the create settles.
				r.creatingLBs[k] = struct{}{}
				continue
			}
			if !has(r.creatingLBs, k) && !has(r.carried.lbs, k) {
				r.withdrawDeclaration(k, true) // only such keys stand
			}
		}
	}
	if len(r.creatingLBs) > 0 {
		kept := map[intent.LBKey]struct{}{}
		if len(r.standingLBs) == 0 {
			r.standingLBs = make(map[intent.LBKey]struct{}, len(r.creatingLBs))
		}
		for k := range r.creatingLBs {
			switch e := r.lbs[k]; {
			case e != nil && e.uncertain != nil:
				kept[k] = struct{}{}
			case r.stands(e) && !r.undurableDeclaration: // only a durable declaration may stand
				r.standingLBs[k] = struct{}{}
			case has(r.carried.lbs, k): // stays declared, carried
			default:
				r.withdrawDeclaration(k, e != nil && e.desired != nil && e.desired.Origin.Allocated())
			}
		}
		r.creatingLBs = kept
	}
	if len(r.creatingEPs) > 0 {
		kept := map[string]struct{}{}
		for ip := range r.creatingEPs {
			if ep := r.eps[ip]; ep != nil && ep.uncertain != nil {
				kept[ip] = struct{}{}
			} else if !has(r.carried.eps, ip) {
				r.journal(journalRecord{Kind: recordCreatingEndpoint, ID: ip})
			}
		}
		r.creatingEPs = kept
	}
}

// stands reports whether e's key may stay declared after its create
// settled, so that its next create (without ModifyLoadBalancer, every
// change of its load balancer is a delete and a create) needs no
// declaration and no fsync of its own. Only a frontend the apiserver
// allocated (a cluster IP, a node port) may: a foreign load balancer there
// can only be a leftover, which hnsproxy takes anyway (foreign.go), so a
// declaration that outlives its Sync cannot make a restart take a
// tenant's. See docs/reliability.md, "Standing declarations".
func (r *Reconciler) stands(e *lbEntry) bool {
	return e != nil && e.desired != nil && e.desired.Origin.Allocated() && !r.modifyOn()
}

func has[K comparable](m map[K]struct{}, k K) bool {
	_, ok := m[k]
	return ok
}

func addNew[K comparable](m map[K]struct{}, k K) bool {
	if _, ok := m[k]; ok {
		return false
	}
	m[k] = struct{}{}
	return true
}
