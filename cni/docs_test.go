package cni

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestCNIPageNamesEveryField: every configuration field hnscni reads (the
// names it does not warn about as unknown) is named in docs/cni.md, so an
// operator can look up what a field of their configuration does.
// prevResult is the runtime's, not the operator's.
func TestCNIPageNamesEveryField(t *testing.T) {
	page, err := os.ReadFile("../docs/cni.md")
	if err != nil {
		t.Fatal(err)
	}
	names := jsonNames(reflect.TypeFor[NetConf]())
	for _, f := range jsonNames(reflect.TypeFor[OptionalFlags]()) {
		names = append(names, "optionalFlags."+f)
	}
	for _, n := range names {
		if n != "prevResult" && !strings.Contains(string(page), "`"+n+"`") {
			t.Errorf("configuration field %q is not named in docs/cni.md", n)
		}
	}
}
