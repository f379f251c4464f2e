package options

import (
	"strings"
	"testing"
)

// TestANegativeBackendCapIsRefusedSayingWhatZeroDoes: the refusal of a
// negative --max-backends-per-lb tells the operator what 0 does, as the
// flag's help and docs/operators.md say it: the cap follows the node's
// Windows build (the HNS version only where the build is unknown). It
// said "from the HNS version", which sends an operator who reads it to
// the wrong fact about the node.
func TestANegativeBackendCapIsRefusedSayingWhatZeroDoes(t *testing.T) {
	_, _, _, _, err := parse(t, kubeNetwork, "--max-backends-per-lb=-1")
	wantError(t, err, "maxBackendsPerLB")
	if msg := err.Error(); !strings.Contains(msg, "Windows build") || strings.Contains(msg, "(from the HNS version)") {
		t.Errorf("error = %q, want it to say that 0 takes the cap from the Windows build", msg)
	}
}
