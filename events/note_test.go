package events

import (
	"strings"
	"testing"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestLongNotesAreCutToWhatTheAPIAccepts: the API server refuses an
// events.k8s.io/v1 Event whose note is over 1024 bytes, and the
// broadcaster drops a refused event after one log line. A long HNS message
// (localized, so multi-byte) or a long list of addresses must still reach
// the API, cut at a character boundary and saying it was cut.
func TestLongNotesAreCutToWhatTheAPIAccepts(t *testing.T) {
	r, wait := recorded(t)
	long := hnslb.NewError("CreateLoadBalancer", hnslb.CodeInvalidParameter, "%s", strings.Repeat("Le paramètre est incorrect. ", 60))
	r.LoadBalancerRejected(web, "http", "10.96.0.10:80/tcp", long)
	ips := make([]string, 0, 100)
	for i := range 100 {
		ips = append(ips, "fd00:10:244:1::"+strings.Repeat("a", i%4+1))
	}
	r.Recorder().Eventf(ServiceRef(web), nil, v1.EventTypeWarning, "BackendsUnrealizable", ActionSync,
		"node %s: ready endpoints %s", "win-1", strings.Join(ips, ", "))
	// A note of exactly the limit goes out whole.
	exact := strings.Repeat("é", NoteLimit/2)
	r.Recorder().Eventf(ServiceRef(web), nil, v1.EventTypeWarning, "Exact", ActionSync, "%s", exact)

	prefixes := map[string]string{
		ReasonLoadBalancerRejected: "node win-1: HNS rejected the load balancer for port http (10.96.0.10:80/tcp): hns CreateLoadBalancer: Le paramètre est incorrect.",
		"BackendsUnrealizable":     "node win-1: ready endpoints fd00:10:244:1::a, fd00:10:244:1::aa",
	}
	for _, ev := range wait("shop", 3) {
		if ev.Reason == "Exact" {
			if ev.Note != exact {
				t.Errorf("a note of %d bytes was changed to %q", len(exact), ev.Note)
			}
			continue
		}
		prefix, ok := prefixes[ev.Reason]
		if !ok {
			t.Errorf("unexpected event %q", ev.Reason)
			continue
		}
		delete(prefixes, ev.Reason)
		if len(ev.Note) > NoteLimit || !utf8.ValidString(ev.Note) {
			t.Errorf("%s: note of %d bytes (valid UTF-8: %v), want at most %d", ev.Reason, len(ev.Note), utf8.ValidString(ev.Note), NoteLimit)
		}
		if !strings.HasPrefix(ev.Note, prefix) || !strings.HasSuffix(ev.Note, noteCutMark) {
			t.Errorf("%s: note %q, want it to start %q and end %q", ev.Reason, ev.Note, prefix, noteCutMark)
		}
	}
	for reason := range prefixes {
		t.Errorf("event %s never arrived", reason)
	}
}

func TestBoundNote(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string
	}{
		{"short", "port http: protocol SCTP", "port http: protocol SCTP"},
		{"empty", "", ""},
		{"invalid UTF-8 is replaced, so the bytes counted are the bytes sent", "path C:\\\xff\xfe\\state.json", "path C:\\\uFFFD\\state.json"},
	} {
		if got := boundNote(tc.in); got != tc.want {
			t.Errorf("%s: boundNote(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
	// A rune that straddles the cut is left out whole.
	in := strings.Repeat("a", NoteLimit-len(noteCutMark)-1) + "€" + strings.Repeat("b", 100)
	got := boundNote(in)
	if want := strings.Repeat("a", NoteLimit-len(noteCutMark)-1) + noteCutMark; got != want {
		t.Errorf("boundNote cut a rune: got %d bytes ending %q", len(got), got[len(got)-20:])
	}
}
