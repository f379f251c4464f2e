package events

import (
	"strings"
	"unicode/utf8"
)

// NoteLimit is the most bytes the note of an events.k8s.io/v1 Event may
// hold: the API server refuses a longer one as invalid (k8s.io/kubernetes
// pkg/apis/core/validation/events.go, NoteLengthLimit), and client-go's
// broadcaster drops an event the server refused after one log line, without
// retrying. An HNS message, a wrapped error or a list of addresses can be
// longer.
const NoteLimit = 1024

// noteCutMark ends a note that was cut.
const noteCutMark = " … (cut; the hnsproxy log has the whole note)"

// boundNote returns note as the API accepts it: invalid UTF-8 replaced
// (the JSON encoder would replace it, with more bytes than it had), and cut
// at a character boundary, marked, when it is over NoteLimit bytes.
func boundNote(note string) string {
	note = strings.ToValidUTF8(note, string(utf8.RuneError))
	if len(note) <= NoteLimit {
		return note
	}
	cut := NoteLimit - len(noteCutMark)
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + noteCutMark
}
