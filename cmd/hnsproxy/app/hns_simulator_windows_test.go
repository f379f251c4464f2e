package app

import (
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

// Windows builds have no simulator: asking for one is a clear error, not a
// silent fall-back to the real HNS.
func TestWindowsRefusesSimulator(t *testing.T) {
	for _, ep := range []string{"sim", "unix:///C:/x/hns.sock"} {
		c, err := newHNSClient(options.HNS{Endpoint: ep, SimProfile: "ws2022"})
		if err == nil || c != nil || !strings.Contains(err.Error(), "no HNS simulator") {
			t.Errorf("newHNSClient(%q) = %v, %v; want the no-simulator error", ep, c, err)
		}
	}
}
