package options

import (
	"fmt"
	"strings"
)

// A Windows path in double quotes is how a Windows operator's config file
// or kubeconfig most often goes wrong: YAML and JSON take each backslash
// there for an escape, so "C:\k\config" stops the decoder at \k, whose
// message names neither the backslash nor the fix, and "C:\temp\x" holds
// a tab. kube-proxy and client-go refuse the same files with the same
// decoder messages; hnsproxy adds why.

// escapeHint says what went wrong and how to write the path instead.
const escapeHint = `if it is a Windows path: a backslash inside double quotes starts an escape ("C:\temp" holds a tab); write the path with / or \\, or in YAML unquoted or in single quotes`

// unknownEscapeErrors are how go-yaml and encoding/json say they met an
// escape they do not know.
var unknownEscapeErrors = []string{"found unknown escape character", "in string escape code"}

// escapedControls are the control characters YAML's and JSON's escapes
// make of a backslash before a letter or a digit.
const escapedControls = "\x00\a\b\x1b\f\n\r\t\v"

// WithEscapeHint adds escapeHint to a decoding error that stopped at an
// unknown escape, and returns any other error as it is.
func WithEscapeHint(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range unknownEscapeErrors {
		if strings.Contains(err.Error(), s) {
			return fmt.Errorf("%w (%s)", err, escapeHint)
		}
	}
	return err
}
