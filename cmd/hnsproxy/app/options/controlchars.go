package options

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"
)

// checkPrintable refuses a configuration holding a string with a control
// character (or U+FFFE/U+FFFF) anywhere: a field, a list item or a map
// key. None has a use in a name, an address or a duration, and YAML cannot
// hold one unescaped, so --write-config-to could not write such a
// configuration back (FuzzConfigFile found a DEL in winkernel.networkName).
// The error names the field by its path in the file.
func checkPrintable(v any) error {
	return walkStrings(reflect.ValueOf(v), "", func(path, s string) error {
		if i := strings.IndexFunc(s, notPrintable); i >= 0 {
			r := []rune(s[i:])[0]
			if strings.ContainsRune(escapedControls, r) {
				return fmt.Errorf("%s: control character %q at byte %d is not allowed (%s)", path, r, i, escapeHint)
			}
			return fmt.Errorf("%s: control character %q at byte %d is not allowed", path, r, i)
		}
		return nil
	})
}

func notPrintable(r rune) bool { return unicode.IsControl(r) || r == 0xFFFE || r == 0xFFFF }

// walkStrings calls check on every string v holds, with its path.
func walkStrings(v reflect.Value, path string, check func(path, s string) error) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return walkStrings(v.Elem(), path, check)
	case reflect.String:
		return check(path, v.String())
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			p := path
			if name := jsonName(f); name != "" {
				p = joinPath(path, name)
			}
			if err := walkStrings(v.Field(i), p, check); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := walkStrings(v.Index(i), path+"["+strconv.Itoa(i)+"]", check); err != nil {
				return err
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			if err := walkStrings(iter.Key(), path+" key", check); err != nil {
				return err
			}
			if err := walkStrings(iter.Value(), joinPath(path, fmt.Sprint(iter.Key())), check); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonName is a field's name in the file: its json tag's, or none for an
// inlined (embedded) struct, whose fields are the parent's.
func jsonName(f reflect.StructField) string {
	name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	if strings.Contains(opts, "inline") || (f.Anonymous && name == "") {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
