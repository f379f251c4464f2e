package reconciler

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/hnsproxy/hnsproxy/intent"
)

// The state file's journal. Between two snapshots (statefile.go) each change
// of what hnsproxy owns is one line appended to <state file>.journal, so a
// Sync that creates or deletes one object writes a few lines, not the whole
// owned set, with at most one fsync (saveState and writeState say which
// appends are fsynced and why that is enough). A line is the CRC-32C of the
// record's JSON in hex, a space, the JSON, and a newline. Loading replays the journal over the
// snapshot and stops at the first line that is incomplete or fails its
// checksum: a write torn by a crash loses only that write, whose objects
// Start then meets as unowned, adopts when identical and otherwise leaves
// alone. Start folds the journal into a new snapshot, and so does a Sync
// once the journal has outgrown the owned set.
//
// Each append ends with a commit record, and a journal begins with one:
// replay applies a batch only at its commit, so a write that failed after
// some whole lines (a full disk whose cut-back failed too) never applies
// half a batch. Those lines are the front of the queue the next append
// sends again in full, so applying them before it changes nothing. A
// journal without any commit record (written before batches had them)
// applies every record as it comes.

// recordKind says which set a journal record changes.
type recordKind string

const (
	recordLoadBalancer     recordKind = "lb" // ID: an owned load balancer
	recordRemoteEndpoint   recordKind = "ep" // ID: an owned remote endpoint
	recordCreatingLB       recordKind = "creating-lb"
	recordCreatingEndpoint recordKind = "creating-ep" // ID: the endpoint's IP
	recordCommit           recordKind = "commit"      // the records since the last commit apply
	// recordFailedLB: ID, a load balancer create HNS refused, by what a load
	// balancer it left would show (partial.go). hnsproxy versions before it
	// skip the line as damaged, and so take over at their start.
	recordFailedLB recordKind = "failed-lb"
)

// A record of a kind this version does not know, whole and with a good
// checksum, was written by a newer hnsproxy (a downgrade): replay skips it
// and counts it, and it is not damage, so it costs no ownership and makes
// no takeover. So a new kind must be one an older hnsproxy may skip: it may
// only add what that version never knew (as failed-lb does), never move
// ownership of a load balancer or an endpoint, which stays in lb and ep
// records; a change an older version must not skip needs a new
// stateFileVersion. An older --cleanup skips nothing: it refuses a file
// with such a record (newerstate.go).
var errNewerKind = errors.New("record of a kind a newer hnsproxy writes")

// commitRecord ends a batch.
var commitRecord = journalRecord{Kind: recordCommit}

// journalRecord adds an entry to one of the state's sets, or removes it.
type journalRecord struct {
	Add  bool          `json:"add"`
	Kind recordKind    `json:"kind"`
	ID   string        `json:"id,omitempty"`
	Key  *intent.LBKey `json:"key,omitempty"`
	// SentDistribution, on a creating-lb add, is the distribution of the
	// create the key is declared for (sentdecl.go); "" records none. Older
	// hnsproxy versions ignore the field: a plain declaration.
	SentDistribution string `json:"sentDistribution,omitempty"`
	// Baseline, on a load balancer's add, is its baseline (baseline.go);
	// an add of an ID already owned only changes its baseline. Older
	// hnsproxy versions ignore the field.
	Baseline string `json:"baseline,omitempty"`
	// Unconfirmed, on a load balancer's or remote endpoint's removal, says
	// HNS reported it deleted and no listing has shown it gone yet: it
	// joins the deleted set (deleted.go), which any later record of its ID
	// leaves. Older hnsproxy versions ignore the field: a plain removal.
	Unconfirmed bool `json:"unconfirmed,omitempty"`
	// allocated marks the withdrawal of a key whose frontend the apiserver
	// allocated (a cluster IP, a node port). Such a declaration may stand
	// for good (statefile.go, stands), so its withdrawal is safe to lose
	// with the power and need not be durable by the next Sync. Not written.
	allocated bool
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func journalPath(stateFile string) string { return stateFile + ".journal" }

// compactAfter is how many journal lines make a Sync fold the journal into
// a snapshot: never fewer than a few thousand, else as many as owned IDs.
func compactAfter(owned int) int { return max(4096, owned) }

// encodeRecords renders records as journal lines, into one new buffer.
func encodeRecords(records []journalRecord) []byte {
	return appendLines(make([]byte, 0, len(records)*112), records)
}

// appendLines appends records to buf as journal lines: each record's JSON
// (appendRecord) after room for its checksum, which is then filled in.
func appendLines(buf []byte, records []journalRecord) []byte {
	for _, rec := range records {
		start := len(buf)
		buf = append(buf, "00000000 "...)
		buf = appendRecord(buf, rec)
		var sum [4]byte
		binary.BigEndian.PutUint32(sum[:], crc32.Checksum(buf[start+9:], castagnoli))
		hex.Encode(buf[start:start+8], sum[:])
		buf = append(buf, '\n')
	}
	return buf
}

// errFsync marks a failed fsync of the journal: the kernel may have dropped
// every unsynced byte of it, those of earlier appends without an fsync too.
var errFsync = errors.New("fsync of the journal failed")

// appendJournal appends lines to the journal at path and, if durable,
// syncs it to disk. On failure it cuts the journal back to its length
// before the append, so that a short write leaves no torn line (replay
// would skip one anyway), and lets go of it.
func (s *stateStore) appendJournal(fsys stateFS, path string, lines []byte, durable bool) error {
	f, err := s.openJournal(fsys, path)
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		s.closeJournal()
		return err
	}
	if info.Size() == 0 {
		// A new journal starts with a commit: it marks the format whose
		// uncommitted records replay drops, and its ID is the generation
		// the snapshot names (stateFile.Journal).
		lines = append(encodeRecords([]journalRecord{{Kind: recordCommit, ID: s.journalGen}}), lines...)
	}
	if _, err = f.Write(lines); err == nil && durable {
		if err = f.Sync(); err != nil {
			err = fmt.Errorf("%w: %w", errFsync, err)
		}
	}
	if err != nil {
		if terr := f.Truncate(info.Size()); terr != nil {
			err = errors.Join(err, fmt.Errorf("cutting the journal back: %w", terr))
		}
		s.closeJournal()
		return err
	}
	if !keepJournalOpen {
		return s.closeJournal()
	}
	return nil
}

// openJournal opens the journal at path for appending, or returns the one
// an earlier append left open. Opening it for each append (a directory
// check, an open, a close) was a third of the state file's cost per
// change. The held one is used only while path still names that file (an
// Lstat compared with os.SameFile): a journal replaced, or a link planted
// at path, is then opened anew, which refuses a link (OpenFile), as an open
// for each append did.
func (s *stateStore) openJournal(fsys stateFS, path string) (stateHandle, error) {
	if f := s.heldJournal(fsys, path); f != nil {
		return f, nil
	}
	if err := fsys.MkdirAll(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := fsys.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	id, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	s.journal, s.journalID = f, id
	return f, nil
}

// heldJournal is the journal an append left open, if path still names it;
// otherwise it lets go of it and returns nil.
func (s *stateStore) heldJournal(fsys stateFS, path string) stateHandle {
	if s.journal == nil {
		return nil
	}
	if now, err := fsys.Lstat(path); err == nil && os.SameFile(now, s.journalID) {
		return s.journal
	}
	s.closeJournal()
	return nil
}

// closeJournal lets go of the journal an append left open: before the
// journal is removed or renamed (on Windows an open file cannot be), and
// after a failed write.
func (s *stateStore) closeJournal() error {
	if s.journal == nil {
		return nil
	}
	err := s.journal.Close()
	s.journal, s.journalID = nil, nil
	return err
}

// recordStart is how every record's JSON begins (encoding/json keeps field
// order). Inside a JSON string a quote is escaped, so in a good line it
// occurs once, right after the checksum: its last occurrence in a damaged
// line is where a good record glued to torn bytes would start.
var recordStart = []byte(` {"add":`)

// errStaleJournal is a journal of an earlier generation than the snapshot's.
var errStaleJournal = errors.New("journal older than its snapshot")

// replayJournal applies the journal at path to s. It returns how many
// records it applied and what it skipped: torn or corrupt lines (the rest
// still applies), or the whole journal when it is not a regular file or too
// large (a *corruptStateError). A missing journal is an empty one; one
// whose first line is a good record other than a commit of generation gen
// (when gen is set) is an older one, errStaleJournal, and applies nothing;
// other read errors are returned. A damaged first line tells no
// generation: the journal replays, the damage reported.
func replayJournal(fsys stateFS, path string, s *stateSets, gen string) (applied int, skipped error, err error) {
	raw, err := readStateFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil, nil
	}
	if err != nil {
		if err = asCorrupt(path, err); errors.As(err, new(*corruptStateError)) {
			return 0, err, nil
		}
		return 0, nil, err
	}
	if gen != "" {
		first, _, _ := bytes.Cut(raw, []byte{'\n'})
		if rec, err := decodeRecord(first); (err == nil || errors.Is(err, errNewerKind)) && (rec.Kind != recordCommit || rec.ID != gen) {
			return 0, nil, errStaleJournal
		}
	}
	var damage []error
	var batch []journalRecord // records since the last commit
	batched := false          // a commit was seen: records wait for theirs
	for offset := 0; offset < len(raw); {
		end := bytes.IndexByte(raw[offset:], '\n')
		if end < 0 {
			damage = append(damage, fmt.Errorf("unterminated last line at byte %d", offset))
			break
		}
		line := raw[offset : offset+end]
		rec, err := decodeRecord(line)
		if err != nil && !errors.Is(err, errNewerKind) {
			damage = append(damage, fmt.Errorf("line at byte %d: %w", offset, err))
			if i := bytes.LastIndex(line, recordStart); i > 8 {
				rec, err = decodeRecord(line[i-8:])
			}
		}
		switch {
		case errors.Is(err, errNewerKind):
			s.newer++
		case err != nil:
		case rec.Kind == recordCommit:
			for _, r := range batch {
				s.apply(r)
			}
			applied += len(batch)
			batch, batched = batch[:0], true
		default:
			batch = append(batch, rec)
		}
		offset += end + 1
	}
	if !batched { // a journal from before commits: every record applies
		for _, r := range batch {
			s.apply(r)
		}
		applied += len(batch)
	}
	if len(damage) > 0 {
		return applied, fmt.Errorf("journal %s: skipped %d damaged lines, first: %w", path, len(damage), damage[0]), nil
	}
	return applied, nil, nil
}

func decodeRecord(line []byte) (journalRecord, error) {
	var rec journalRecord
	sum, raw, ok := bytes.Cut(line, []byte{' '})
	if !ok || len(sum) != 8 {
		return rec, errors.New("no checksum")
	}
	if fmt.Sprintf("%08x", crc32.Checksum(raw, castagnoli)) != string(sum) {
		return rec, errors.New("checksum mismatch")
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return rec, err
	}
	switch rec.Kind {
	case recordLoadBalancer, recordRemoteEndpoint, recordCreatingEndpoint, recordFailedLB:
		if rec.ID == "" {
			return rec, fmt.Errorf("%s record without an id", rec.Kind)
		}
	case recordCreatingLB:
		if rec.Key == nil {
			return rec, errors.New("creating-lb record without a key")
		}
	case recordCommit:
	case "":
		return rec, errors.New("record without a kind")
	default:
		return rec, fmt.Errorf("%w: %q", errNewerKind, rec.Kind)
	}
	return rec, nil
}

// stateSets is the state file as sets, for replaying a journal.
type stateSets struct {
	lbs, eps, creatingEPs  map[string]struct{}
	creatingLBs            map[intent.LBKey]struct{}
	sent                   map[intent.LBKey]string // of creatingLBs: sentdecl.go
	baselines              map[string]string       // of lbs
	deletedLBs, deletedEPs map[string]struct{}
	failedLBs              map[string]struct{}
	// newer counts the records replay skipped as a newer hnsproxy's.
	newer int
}

func setsOf(s *stateFile) *stateSets {
	out := &stateSets{
		lbs: idSet(s.LoadBalancers), eps: idSet(s.RemoteEndpoints), creatingEPs: idSet(s.CreatingRemoteEndpoints),
		creatingLBs: map[intent.LBKey]struct{}{}, sent: s.sentOf(), baselines: map[string]string{},
		deletedLBs: idSet(s.DeletedLoadBalancers), deletedEPs: idSet(s.DeletedRemoteEndpoints),
		failedLBs: idSet(s.FailedLoadBalancerCreates),
	}
	for id, b := range s.LoadBalancerBaselines {
		if _, ok := out.lbs[id]; ok {
			out.baselines[id] = b
		}
	}
	for _, k := range s.CreatingLoadBalancers {
		out.creatingLBs[k] = struct{}{}
	}
	return out
}

func (s *stateSets) apply(rec journalRecord) {
	if rec.Kind == recordCreatingLB {
		if rec.Add {
			s.creatingLBs[*rec.Key] = struct{}{}
		} else {
			delete(s.creatingLBs, *rec.Key)
		}
		if _, ok := parseSent(rec.SentDistribution); ok && rec.Add {
			s.sent[*rec.Key] = rec.SentDistribution
		} else {
			delete(s.sent, *rec.Key) // a declaration that records none, or none at all
		}
		return
	}
	set := map[recordKind]map[string]struct{}{
		recordLoadBalancer: s.lbs, recordRemoteEndpoint: s.eps, recordCreatingEndpoint: s.creatingEPs, recordFailedLB: s.failedLBs,
	}[rec.Kind]
	if rec.Add {
		set[rec.ID] = struct{}{}
	} else {
		delete(set, rec.ID)
	}
	var deleted map[string]struct{}
	switch rec.Kind {
	case recordLoadBalancer:
		deleted = s.deletedLBs
	case recordRemoteEndpoint:
		deleted = s.deletedEPs
	}
	switch {
	case deleted == nil:
	case rec.Unconfirmed && !rec.Add:
		deleted[rec.ID] = struct{}{}
	default:
		delete(deleted, rec.ID) // any other record of the ID ends its unconfirmed delete
	}
	switch {
	case rec.Kind != recordLoadBalancer:
	case !rec.Add:
		delete(s.baselines, rec.ID)
	case rec.Baseline != "":
		s.baselines[rec.ID] = rec.Baseline
	}
}

func (s *stateSets) file() *stateFile {
	out := &stateFile{Version: stateFileVersion, LoadBalancers: []string{}, RemoteEndpoints: []string{}}
	for id := range s.lbs {
		out.LoadBalancers = append(out.LoadBalancers, id)
	}
	if len(s.baselines) > 0 {
		out.LoadBalancerBaselines = s.baselines
	}
	for id := range s.eps {
		out.RemoteEndpoints = append(out.RemoteEndpoints, id)
	}
	for ip := range s.creatingEPs {
		out.CreatingRemoteEndpoints = append(out.CreatingRemoteEndpoints, ip)
	}
	for k := range s.creatingLBs {
		out.CreatingLoadBalancers = append(out.CreatingLoadBalancers, k)
	}
	out.CreatingLoadBalancersSent = sentFor(out.CreatingLoadBalancers, s.sent)
	out.DeletedLoadBalancers = slices.Collect(maps.Keys(s.deletedLBs))
	out.DeletedRemoteEndpoints = slices.Collect(maps.Keys(s.deletedEPs))
	out.FailedLoadBalancerCreates = slices.Collect(maps.Keys(s.failedLBs))
	return out
}
