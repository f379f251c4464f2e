package app

import (
	"fmt"

	"github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/hnslb"
)

// boundsByCode places the events of one kind of HNS refusal (a load
// balancer, a backend's remote endpoint), each HNS error code apart, so
// that a code HNS gives every object on the node does not silence another
// code's refusals: one events.Bound per code with refusals, keyed by the
// refused object.
type boundsByCode map[string]*events.Bound[string]

// errorCode is how refusals are grouped: HNS's code, or none.
func errorCode(err error) string {
	if code, ok := hnslb.CodeOf(err); ok {
		return fmt.Sprintf("0x%x", uint32(code))
	}
	return "no HNS code"
}

// round starts a round with the code of each object refused now and
// returns those raised nowhere that are owed now, but for the fresh ones,
// which the caller places anyway. A code no object is refused with is
// forgotten.
func (b boundsByCode) round(codeOf map[string]string, fresh map[string]bool) (owed []string) {
	refused := map[string]map[string]bool{}
	for key, code := range codeOf {
		if refused[code] == nil {
			refused[code] = map[string]bool{}
		}
		refused[code][key] = true
	}
	for code := range b {
		if refused[code] == nil {
			delete(b, code)
		}
	}
	for code, keys := range refused {
		if b[code] == nil {
			b[code] = &events.Bound[string]{}
		}
		b[code].Round(keys)
		for key := range keys {
			if !fresh[key] && b[code].Owed(key) {
				owed = append(owed, key)
			}
		}
	}
	return owed
}

// next places the refusal of key, refused with code.
func (b boundsByCode) next(code, key string) events.Placement { return b[code].Next(key) }
