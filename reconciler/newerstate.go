package reconciler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// A downgraded hnsproxy reads what a newer one wrote by skipping what it
// does not know (docs/reliability.md, "The state file across versions"):
// a start may, since it keeps the file's ownership and converges from
// there. --cleanup may not. What it skips can name objects to delete (a
// failed create's leftover, an unconfirmed delete: each new to some
// version), and a cleanup removes the file it read, or sets a newer
// version's snapshot aside and writes its own, so the newer hnsproxy's
// --cleanup would then find nothing to delete either. Cleanup therefore
// refuses such a file and leaves it as it is.

// ErrNewerStateFile is returned by Cleanup for a state file that holds
// what only a newer hnsproxy reads.
var ErrNewerStateFile = errors.New("the state file holds what only a newer hnsproxy reads")

// newerContent says what in the state file at path this version cannot
// read (the first such thing found), "" when it reads all of it: a
// snapshot of a newer version, a snapshot field, or a journal record of a
// kind or with a field it does not know. Damage is not newer content: a
// snapshot that does not parse, journal lines that fail their checksum and
// read errors are loadOwned's to judge.
func newerContent(fsys stateFS, path string) string {
	if raw, err := readStateFile(fsys, path); err == nil {
		var s stateFile
		err := unknownFields(raw, &s)
		if s.Version > stateFileVersion {
			return fmt.Sprintf("a snapshot of version %d, where this one reads version %d", s.Version, stateFileVersion)
		}
		if err != nil {
			return fmt.Sprintf("snapshot fields this one does not know (%v)", err)
		}
	}
	raw, err := readStateFile(fsys, journalPath(path))
	if err != nil {
		return ""
	}
	for line := range bytes.Lines(raw) {
		line = bytes.TrimSuffix(line, []byte{'\n'})
		rec, err := decodeRecord(line)
		if errors.Is(err, errNewerKind) {
			return fmt.Sprintf("journal records of kind %q", rec.Kind)
		}
		if err != nil {
			continue
		}
		_, record, _ := bytes.Cut(line, []byte{' '})
		if err := unknownFields(record, new(journalRecord)); err != nil {
			return fmt.Sprintf("fields this one does not know in a %q journal record (%v)", rec.Kind, err)
		}
	}
	return ""
}

// unknownFields is the error encoding/json's DisallowUnknownFields gives
// for raw decoded into v ("json: unknown field \"x\"", naming the first),
// nil if v has every field raw holds or raw does not decode at all.
func unknownFields(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	err := d.Decode(v)
	if err == nil || json.Unmarshal(raw, v) != nil {
		return nil
	}
	return err
}

// refuseNewer is ErrNewerStateFile for the state file at path, naming
// what it holds and what to do, or nil when this version reads all of it.
func refuseNewer(fsys stateFS, path string) error {
	what := newerContent(fsys, path)
	if what == "" {
		return nil
	}
	return fmt.Errorf("cleanup: %s: %w: %s. What it holds may name HNS objects to delete, so nothing was deleted and the file is left as it is; "+
		"run --cleanup with the hnsproxy version that wrote it, or a newer one", path, ErrNewerStateFile, what)
}
