package options

import (
	"strings"
	"testing"

	cliflag "k8s.io/component-base/cli/flag"
)

// TestSourceVIPHelpSaysOverlayReservesOne: on overlay an unset source VIP
// is no error, since hnsproxy reserves one through the node's CNI IPAM
// (cmd/hnsproxy/app/sourcevip); --help must not call the flag required
// there, or an operator with one ConfigMap for every node sets a VIP per
// node by hand for nothing.
func TestSourceVIPHelpSaysOverlayReservesOne(t *testing.T) {
	var fss cliflag.NamedFlagSets
	NewOptions().AddFlags(&fss)
	usage := fss.FlagSet(SectionWinkernel).Lookup("source-vip").Usage
	if strings.Contains(usage, "required") || !strings.Contains(usage, "CNI IPAM") {
		t.Errorf("--source-vip's help %q: want it to say that on overlay an unset one is reserved through the node's CNI IPAM", usage)
	}
}
