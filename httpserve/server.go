package httpserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/klog/v2"
)

// Timeouts of every server. A scrape of /metrics or /debug/hns on a large
// node takes seconds, so writes get more room than reads.
type Timeouts struct {
	ReadHeader, Read, Write, Idle time.Duration
}

// DefaultTimeouts are what production uses; tests shorten them.
var DefaultTimeouts = Timeouts{
	ReadHeader: 5 * time.Second,
	Read:       10 * time.Second,
	Write:      60 * time.Second,
	Idle:       30 * time.Second,
}

// NewServer returns an http.Server for handler with DefaultTimeouts and
// headers bounded by MaxHeaderBytes.
func NewServer(handler http.Handler) *http.Server {
	t := DefaultTimeouts
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// Serve serves handler on ln, limited to ConnsPerServer connections, until
// ctx ends, then shuts down gracefully. It closes ln.
func Serve(ctx context.Context, ln net.Listener, handler http.Handler, name string) error {
	srv := NewServer(handler)
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	klog.FromContext(ctx).V(2).Info("Serving", "server", name, "address", ln.Addr().String())
	if err := srv.Serve(Limit(ln, ConnsPerServer, nil)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s server: %w", name, err)
	}
	return nil
}
