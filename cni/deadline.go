package cni

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/containernetworking/cni/pkg/types"
)

// A command's deadlines. hcn calls are synchronous RPCs into the HNS
// service that ignore their context once made, so a wedged HNS would hold
// the plugin until the runtime kills it, and the kubelet would only say
// "context deadline exceeded". The plugin answers first: the kubelet gives
// StopPodSandbox (where DEL runs) --runtime-request-timeout, 2 minutes by
// default, and RunPodSandbox (ADD) twice that, so a command answers within
// workTimeout+undoTimeout, under 2 minutes; an ADD given up on takes one
// undoTimeout more to release its address (onGiveUp), well under 4.
var (
	// workTimeout is the context deadline of a command's HNS and IPAM work.
	workTimeout = 90 * time.Second
	// undoTimeout is the fresh deadline of a failed ADD's compensations;
	// after both, run stops waiting for a call that hangs.
	undoTimeout = 20 * time.Second
)

// errGaveUp is what a command that finished after run gave up returns: its
// answer was already given, so an ADD undoes what it made.
var errGaveUp = errors.New("the plugin already answered that HNS did not answer in time")

// answerOnce is the one answer a command gives: its own result, or run's
// "try again later" when a call hangs past the deadlines.
type answerOnce struct{ given atomic.Bool }

// take reports whether the caller may give the answer (only the first may).
func (a *answerOnce) take() bool { return a.given.CompareAndSwap(false, true) }

// onGiveUp is what run does for a command it gives up on before answering:
// an ADD's address release once IPAM has given one. The command's
// goroutine sets it, run's calls it.
type onGiveUp struct {
	mu sync.Mutex
	f  func(context.Context)
}

func (g *onGiveUp) set(f func(context.Context)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.f = f
}

// run calls the function set, if any, under a fresh undoTimeout.
func (g *onGiveUp) run() {
	g.mu.Lock()
	f := g.f
	g.mu.Unlock()
	if f == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), undoTimeout)
	defer cancel()
	f(ctx)
}

// run runs f under workTimeout and waits for it at most workTimeout plus
// undoTimeout. A call still hanging then is left running (the process's
// exit ends it, but HNS may still apply it: what it made is removed by the
// runtime's DEL, which ADD's failure brings, if that comes later, else by
// the ADD that IPAM hands its address to, or by GC), an ADD's address is
// released (onGiveUp), and the command fails with code 11, try again later.
func (s *session) run(f func(ctx context.Context, s *session) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), workTimeout)
	defer cancel()
	done := make(chan error, 1)
	s.finished = done
	go func() { done <- f(ctx, s) }()
	limit := workTimeout + undoTimeout
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	}
	if !s.answer.take() {
		// f is giving its answer this moment.
		return <-done
	}
	// The runtime takes the pod as not wired and calls DEL, which fails as
	// well while HNS hangs; containerd then forgets the sandbox without
	// another DEL (it drops a teardown error when ADD gave no result), so
	// an ADD releases its address itself. Should HNS apply the hung create
	// later, the ADD given that address removes the endpoint (addressheld.go).
	s.giveUp.run()
	return types.NewError(types.ErrTryAgainLater, fmt.Sprintf("HNS did not answer within %v", limit),
		"an HNS call hangs (is the hns service wedged?); HNS may still apply it, and DEL, GC or the next ADD given its address removes what it made")
}
