package reconciler

import (
	"encoding/json"
	"strconv"

	"github.com/hnsproxy/hnsproxy/intent"
)

// The state file's JSON, appended by hand: encoding/json's reflection (and
// its sorting of map keys) was most of what a snapshot of 30,000 IDs cost,
// a compaction that lands inside one change every few hundred, and most of
// a journal append's CPU. The output is what encoding/json writes for the
// same values (a snapshot's baselines in map order instead of sorted), so
// the reader is unchanged; statejson_test.go holds the two together.

// appendJSONString appends s as a JSON string. The IDs, IPs and baselines
// the state file holds are plain ASCII; anything else is left to
// encoding/json, so escaping (and the replacement of invalid UTF-8) is
// exactly its.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			raw, _ := json.Marshal(s) // a string always encodes
			return append(b, raw...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainJSON holds the bytes encoding/json writes as they are: printable
// ASCII but for the quote, the backslash and the three it escapes for HTML.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = true
	}
	for _, c := range `"\\<>&` {
		t[c] = false
	}
	return t
}()

// appendLBKey appends k as encoding/json writes an intent.LBKey.
func appendLBKey(b []byte, k intent.LBKey) []byte {
	b = append(b, `{"Family":`...)
	b = strconv.AppendUint(b, uint64(k.Family), 10)
	b = append(b, `,"VIP":`...)
	b = appendJSONString(b, k.VIP)
	b = append(b, `,"Protocol":`...)
	b = strconv.AppendUint(b, uint64(k.Protocol), 10)
	b = append(b, `,"Port":`...)
	b = strconv.AppendUint(b, uint64(k.Port), 10)
	return append(b, '}')
}

// appendRecord appends rec as encoding/json writes a journalRecord.
func appendRecord(b []byte, rec journalRecord) []byte {
	b = append(b, `{"add":`...)
	b = strconv.AppendBool(b, rec.Add)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, string(rec.Kind))
	if rec.ID != "" {
		b = append(b, `,"id":`...)
		b = appendJSONString(b, rec.ID)
	}
	if rec.Key != nil {
		b = append(b, `,"key":`...)
		b = appendLBKey(b, *rec.Key)
	}
	if rec.SentDistribution != "" {
		b = append(b, `,"sentDistribution":`...)
		b = appendJSONString(b, rec.SentDistribution)
	}
	if rec.Baseline != "" {
		b = append(b, `,"baseline":`...)
		b = appendJSONString(b, rec.Baseline)
	}
	if rec.Unconfirmed {
		b = append(b, `,"unconfirmed":true`...)
	}
	return append(b, '}')
}

// appendSnapshot appends s as encoding/json writes a stateFile, but for
// the order of the baselines.
func appendSnapshot(b []byte, s *stateFile) []byte {
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, int64(s.Version), 10)
	b = append(b, `,"loadBalancers":`...)
	b = appendStrings(b, s.LoadBalancers)
	b = append(b, `,"remoteEndpoints":`...)
	b = appendStrings(b, s.RemoteEndpoints)
	if len(s.LoadBalancerBaselines) > 0 {
		b = append(b, `,"loadBalancerBaselines":{`...)
		first := true
		for id, base := range s.LoadBalancerBaselines {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, id)
			b = append(b, ':')
			b = appendJSONString(b, base)
		}
		b = append(b, '}')
	}
	if len(s.CreatingLoadBalancers) > 0 {
		b = append(b, `,"creatingLoadBalancers":[`...)
		for i, k := range s.CreatingLoadBalancers {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendLBKey(b, k)
		}
		b = append(b, ']')
	}
	if len(s.CreatingLoadBalancersSent) > 0 {
		b = append(b, `,"creatingLoadBalancersSent":`...)
		b = appendStrings(b, s.CreatingLoadBalancersSent)
	}
	if len(s.CreatingRemoteEndpoints) > 0 {
		b = append(b, `,"creatingRemoteEndpoints":`...)
		b = appendStrings(b, s.CreatingRemoteEndpoints)
	}
	if s.Takeover != "" {
		b = append(b, `,"takeover":`...)
		b = appendJSONString(b, s.Takeover)
	}
	if len(s.DeletedLoadBalancers) > 0 {
		b = append(b, `,"deletedLoadBalancers":`...)
		b = appendStrings(b, s.DeletedLoadBalancers)
	}
	if len(s.DeletedRemoteEndpoints) > 0 {
		b = append(b, `,"deletedRemoteEndpoints":`...)
		b = appendStrings(b, s.DeletedRemoteEndpoints)
	}
	if len(s.FailedLoadBalancerCreates) > 0 {
		b = append(b, `,"failedLoadBalancerCreates":`...)
		b = appendStrings(b, s.FailedLoadBalancerCreates)
	}
	if len(s.Networks) > 0 {
		b = append(b, `,"networks":`...)
		b = appendStrings(b, s.Networks)
	}
	if c := s.LearnedBackendCap; c != nil {
		b = append(b, `,"learnedBackendCap":{"cap":`...)
		b = strconv.AppendInt(b, int64(c.Cap), 10)
		b = append(b, `,"build":`...)
		b = appendJSONString(b, c.Build)
		b = append(b, '}')
	}
	if s.TakeoverPending {
		b = append(b, `,"takeoverPending":true`...)
	}
	if s.Journal != "" {
		b = append(b, `,"journal":`...)
		b = appendJSONString(b, s.Journal)
	}
	return append(b, '}')
}

// appendStrings appends ss as a JSON array; nil is null, as encoding/json
// writes it.
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}
