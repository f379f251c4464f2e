package options

import (
	"fmt"
	"strings"
)

// How a config file or kubeconfig written by hand on Windows most often
// fails to decode, and what the decoders (go-yaml, encoding/json) then
// say, which names neither the cause nor the fix. kube-proxy and client-go
// refuse the same files with the same bare messages; hnsproxy adds why.
//
// A Windows path in double quotes: YAML and JSON take each backslash there
// for an escape, so "C:\k\config" stops the decoder at \k, and "C:\temp\x"
// holds a tab. A tab in the indentation (Notepad's Tab key inserts one):
// YAML indents with spaces only.

// escapeHint says what a backslash in double quotes does and how to write
// the path instead.
const escapeHint = `if it is a Windows path: a backslash inside double quotes starts an escape ("C:\temp" holds a tab); write the path with / or \\, or in YAML unquoted or in single quotes`

// tabHint says what a tab at the start of a line does.
const tabHint = "if the line is indented with a tab: YAML indents with spaces only"

// decodeHints maps what a decoder's error says to the hint it gets.
var decodeHints = []struct{ says, hint string }{
	{"found unknown escape character", escapeHint}, // go-yaml
	{"in string escape code", escapeHint},          // encoding/json
	{"found character that cannot start any token", tabHint},
	{"found a tab character that violates indentation", tabHint},
}

// escapedControls are the control characters YAML's and JSON's escapes
// make of a backslash before a letter or a digit.
const escapedControls = "\x00\a\b\x1b\f\n\r\t\v"

// WithDecodeHint adds the hint for a decoding error that has one, and
// returns any other error as it is.
func WithDecodeHint(err error) error {
	if err == nil {
		return nil
	}
	for _, h := range decodeHints {
		if strings.Contains(err.Error(), h.says) {
			return fmt.Errorf("%w (%s)", err, h.hint)
		}
	}
	return err
}
