package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A burst of /debug/hns requests builds at most DebugRenders views at once;
// the rest wait their turn and are all answered.
func TestDebugRendersAreBounded(t *testing.T) {
	s := NewServer(ServerOptions{EnableDebug: true})
	var running, peak atomic.Int32
	release := make(chan struct{})
	entered := make(chan struct{}, 16)
	s.SetDebugSource(func(ctx context.Context) (any, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return map[string]int{"ok": 1}, nil
	})
	const requests = 8
	var wg sync.WaitGroup
	codes := make(chan int, requests)
	for range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rr := httptest.NewRecorder()
			s.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/debug/hns", nil))
			codes <- rr.Code
		}()
	}
	for range DebugRenders {
		<-entered
	}
	select {
	case <-entered:
		t.Fatalf("a view began while %d were building", DebugRenders)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusOK {
			t.Errorf("a queued request got %d", c)
		}
	}
	if p := peak.Load(); p > DebugRenders {
		t.Errorf("%d views built at once, want at most %d", p, DebugRenders)
	}
}

// A request that waits out its turn behind DebugRenders views is answered
// 503 with a busy error, so a script polling /debug/hns retries it (429
// would tell it to slow down, which it need not: the views are slow, not
// the client too fast).
func TestDebugRequestWaitingTooLongIsBusy(t *testing.T) {
	s := NewServer(ServerOptions{EnableDebug: true})
	s.debugWait = 50 * time.Millisecond
	entered := make(chan struct{}, DebugRenders)
	release := make(chan struct{})
	// The views hold their turns past their own deadline, until the waiting
	// request has its answer.
	s.SetDebugSource(func(context.Context) (any, error) {
		entered <- struct{}{}
		<-release
		return map[string]int{"ok": 1}, nil
	})
	var wg sync.WaitGroup
	for range DebugRenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/debug/hns", nil))
		}()
	}
	for range DebugRenders {
		<-entered
	}
	rr := httptest.NewRecorder()
	s.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/debug/hns", nil))
	close(release)
	wg.Wait()
	if rr.Code != http.StatusServiceUnavailable || !strings.Contains(rr.Body.String(), "busy") {
		t.Errorf("a request waiting out its turn got %d %q, want 503 with a busy error", rr.Code, rr.Body.String())
	}
}
