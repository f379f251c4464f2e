//go:build windows

package hcnclient

import (
	"encoding/json"
	"fmt"
)

// convert copies a value between hnslb's types and hcn's through JSON. Both
// declare the same field names and JSON tags, so the round trip is exact;
// json_windows_test.go proves it for every kind of object, both directions.
func convert[To any](from any) (*To, error) {
	raw, err := json.Marshal(from)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", from, err)
	}
	out := new(To)
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("decode %T as %T: %w", from, out, err)
	}
	return out, nil
}

// convertTo is convert typed for the generic calls (call_windows.go).
func convertTo[From, To any](from *From) (*To, error) { return convert[To](from) }
