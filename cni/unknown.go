package cni

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/containernetworking/cni/pkg/types"
)

// unknownFields lists the top-level and optionalFlags fields hnscni does
// not know, as warnings: real configurations carry fields of other plugins
// (Calico's datastore settings, sdnbridge's "master"), which the reference
// plugins ignore too. A field one or two letters away from a known one
// ("serviceCIRD") is a typo that would silently drop a setting, and is
// refused. Names compare without regard to case, as encoding/json does.
func unknownFields(stdin []byte) ([]string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(stdin, &top); err != nil {
		return nil, types.NewError(types.ErrDecodingFailure, "malformed network configuration", err.Error())
	}
	// "args" is the conventions document's per-plugin arguments field.
	known := append(jsonNames(reflect.TypeFor[NetConf]()), "args")
	warnings, err := checkFields("", top, known)
	if err != nil {
		return nil, err
	}
	for k, v := range top {
		if !strings.EqualFold(k, "optionalFlags") {
			continue
		}
		var flags map[string]json.RawMessage
		if json.Unmarshal(v, &flags) != nil {
			continue // the typed decode reported it
		}
		w, err := checkFields("optionalFlags.", flags, jsonNames(reflect.TypeFor[OptionalFlags]()))
		if err != nil {
			return nil, err
		}
		warnings = append(warnings, w...)
	}
	return warnings, nil
}

func checkFields(prefix string, fields map[string]json.RawMessage, known []string) ([]string, error) {
	var names []string
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	var warnings []string
	for _, k := range names {
		if containsFold(known, k) {
			continue
		}
		if near := nearest(k, known); near != "" {
			return nil, invalidConfig("unknown field %q: did you mean %q?", prefix+k, prefix+near)
		}
		warnings = append(warnings, fmt.Sprintf("unknown configuration field %q ignored", prefix+k))
	}
	return warnings, nil
}

// jsonNames are the JSON field names of a struct, its embedded structs' included.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("json"), ",")[0]
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonNames(f.Type)...)
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		out = append(out, tag)
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, k := range list {
		if strings.EqualFold(k, s) {
			return true
		}
	}
	return false
}

// nearest is the known name at most two edits from s, if s is long enough
// for that to mean a typo rather than another plugin's short field.
func nearest(s string, known []string) string {
	if len(s) < 5 {
		return ""
	}
	for _, k := range known {
		if editDistance(strings.ToLower(s), strings.ToLower(k)) <= 2 {
			return k
		}
	}
	return ""
}

// editDistance is the Levenshtein distance, with a swap of two neighbours
// counted as one edit.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
