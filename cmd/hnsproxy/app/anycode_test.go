package app

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/historytest"
)

// networkRefusedFirst answers the first n reads of a network by name with code.
type networkRefusedFirst struct {
	*sim.HNS
	code hnslb.ErrorCode
	n    int
}

func (h *networkRefusedFirst) GetNetworkByName(ctx context.Context, name string) (*hnslb.Network, error) {
	if h.n > 0 {
		h.n--
		return nil, hnslb.NewError("GetNetworkByName", h.code, "refused")
	}
	return h.HNS.GetNetworkByName(ctx, name)
}

// TestWaitForNetworkPollsThroughAnyCode: whatever code HNS answers the
// start's network read with, the start polls on until
// --hns-network-timeout, and past it fails with HNS's last code.
func TestWaitForNetworkPollsThroughAnyCode(t *testing.T) {
	for _, code := range historytest.AnyCodes() {
		t.Run(fmt.Sprintf("%#x", uint32(code)), func(t *testing.T) {
			s := simAt(13, 2)
			if _, err := s.CreateNetwork(context.Background(), &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge}); err != nil {
				t.Fatal(err)
			}
			hns := &networkRefusedFirst{HNS: s, code: code, n: 3}
			if n, err := waitForNetwork(context.Background(), hns, "cbr0", time.Millisecond, time.Hour, time.Hour, nil); err != nil || n.Name != "cbr0" || hns.n != 0 {
				t.Fatalf("network %+v, err %v after three refusals", n, err)
			}
			hns.n = 1 << 20
			_, err := waitForNetwork(context.Background(), hns, "cbr0", time.Millisecond, time.Hour, 20*time.Millisecond, nil)
			var coded *hnslb.Error
			if !errors.As(err, &coded) || coded.Code != code {
				t.Errorf("refused past the timeout: %v, want HNS's %#x", err, uint32(code))
			}
		})
	}
}
