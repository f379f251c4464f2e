package reconciler

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// silentCreates answers endpoint creates with no document once.
type silentCreates struct {
	hnslb.Client
	silent atomic.Bool
}

func (s *silentCreates) CreateEndpoint(ctx context.Context, networkID string, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	got, err := s.Client.CreateEndpoint(ctx, networkID, e)
	if s.silent.Load() {
		return nil, err
	}
	return got, err
}

// TestBatchedCreateAnsweredWithoutDocument: a batched endpoint create that
// HNS answers with no document (so no ID) is an error, not a panic: the
// endpoint is uncertain, found in HNS by the retry and adopted, not made twice.
func TestBatchedCreateAnsweredWithoutDocument(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	c := &silentCreates{Client: e.hns}
	c.silent.Store(true)
	want := e.threeServices()
	e.hns.ResetCounters()
	r, res := e.start(c, want...)
	if res.Failed == 0 {
		t.Fatalf("first sync %+v: want the endpoints answered without a document failed", res)
	}
	c.silent.Store(false)
	e.converge(r)
	e.assertRealized(want)
	if n := e.counters().CountResult(sim.OpCreateEndpoint, "ok"); n != 3 {
		t.Errorf("%d endpoint creates succeeded in all, want 3 (none made twice)", n)
	}
}
