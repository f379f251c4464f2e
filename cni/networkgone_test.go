package cni

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// networkGoneOnCreate is HNS whose network is deleted between ADD's read of
// it and its endpoint create, as when flanneld recreates its network or an
// operator deletes it while a pod starts.
type networkGoneOnCreate struct{ hnslb.Client }

func (n networkGoneOnCreate) CreateEndpoint(ctx context.Context, networkID string, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	if err := n.Client.DeleteNetwork(ctx, networkID); err != nil {
		return nil, err
	}
	return n.Client.CreateEndpoint(ctx, networkID, e)
}

// TestAddWhoseNetworkIsDeletedMeanwhileFails: under each code HNS may answer
// an endpoint create on a network it no longer has (docs/simulator.md), the
// ADD fails with an error that names the create and HNS's code, and leaves
// no endpoint and no attachment behind.
func TestAddWhoseNetworkIsDeletedMeanwhileFails(t *testing.T) {
	stdin := []byte(`{"cniVersion": "1.0.0", "name": "pods", "type": "hnscni", "mode": "l2bridge", "network": "cbr0"}`)
	for _, code := range sim.MissingNetworkCodes() {
		t.Run(fmt.Sprintf("0x%x", uint32(code)), func(t *testing.T) {
			ctx := context.Background()
			h := sim.New(sim.Options{Variants: sim.ErrorVariants{MissingNetwork: code}})
			ns := cbr0On(t, h)
			err := sessionFor(t, networkGoneOnCreate{h}, stdin, "c1", ns.ID).run(cmdAdd)
			var te *types.Error
			// The error passes on HNS's code: this run met the one it is for.
			if !errors.As(err, &te) || !strings.Contains(err.Error(), "create HNS endpoint") || !strings.Contains(err.Error(), fmt.Sprintf("(0x%x)", uint32(code))) {
				t.Errorf("ADD whose network was deleted before its endpoint create: %v, want a CNI error naming the create and code 0x%x", err, uint32(code))
			}
			if s := h.Snapshot(); len(s.Endpoints) != 0 {
				t.Errorf("endpoints left: %v", s.Endpoints)
			}
			read, err := h.GetNamespaceByID(ctx, ns.ID)
			if err != nil || len(read.Resources) != 0 {
				t.Errorf("namespace resources %v (%v), want none", read, err)
			}
		})
	}
}
