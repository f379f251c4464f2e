package cni

import (
	"context"
	"errors"
	"fmt"
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
// workTimeout+undoTimeout, under 2 minutes.
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

// run runs f under workTimeout and waits for it at most workTimeout plus
// undoTimeout. A call still hanging then is left running (the process's
// exit ends it, but HNS may still apply it: what it made is removed by the
// runtime's DEL, which ADD's failure brings, if that comes later, else by
// the ADD that IPAM hands its address to, or by GC), and the command fails
// with code 11, try again later.
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
	return types.NewError(types.ErrTryAgainLater, fmt.Sprintf("HNS did not answer within %v", limit),
		"an HNS call hangs (is the hns service wedged?); HNS may still apply it, and DEL, GC or the next ADD given its address removes what it made")
}
