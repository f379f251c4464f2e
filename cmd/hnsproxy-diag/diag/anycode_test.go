package diag

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/historytest"
)

// TestReadNamesAnyCodeHNSAnswers: whatever code HNS answers one of the
// diagnosis's reads with, the diagnosis ends with an error that says it was
// reading HNS and carries HNS's code, never a report drawn from part of HNS.
func TestReadNamesAnyCodeHNSAnswers(t *testing.T) {
	f := newFixture(t)
	for _, op := range []sim.Op{sim.OpVersion, sim.OpListNetworks, sim.OpListEndpoints, sim.OpListLoadBalancers, sim.OpListNamespaces} {
		for _, code := range historytest.AnyCodes() {
			t.Run(fmt.Sprintf("%s/%#x", op, uint32(code)), func(t *testing.T) {
				f.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{op: 1}, Errors: []hnslb.ErrorCode{code}})
				defer f.hns.SetFaults(sim.Faults{})
				in, err := ReadWithin(context.Background(), time.Minute, f.source())
				var coded *hnslb.Error
				if in != nil || !errors.As(err, &coded) || coded.Code != code || !strings.HasPrefix(err.Error(), "reading HNS: ") {
					t.Errorf("inputs %v, err %v; want none and HNS's %#x while reading HNS", in != nil, err, uint32(code))
				}
			})
		}
	}
}
