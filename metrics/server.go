package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/component-base/metrics/prometheus/slis"

	"github.com/hnsproxy/hnsproxy/httpserve"
)

// DebugRenders is how many /debug/hns views are built at once; more
// requests wait for a turn (up to debugWaitDefault).
const DebugRenders = 2

// debugWaitDefault is how long a /debug/hns request may wait for its turn
// and its view before it is answered busy: longer than a large node's view
// takes to build.
const debugWaitDefault = 10 * time.Second

// DebugSource returns what /debug/hns shows: per Service port, the desired
// HNS objects, the IDs realized for them and their status. The proxier
// supplies it; the result is rendered as JSON.
type DebugSource func(ctx context.Context) (any, error)

// ServerOptions configure the metrics server.
type ServerOptions struct {
	// ProxyMode is what /proxyMode answers ("kernelspace").
	ProxyMode string
	// EnableProfiling serves /debug/pprof and /debug/flags/v (PUT a
	// number: the log verbosity).
	EnableProfiling bool
	// EnableDebug serves /debug/hns.
	EnableDebug bool
	// Configz is served at /configz as {"kubeproxy.config.k8s.io": Configz}, like kube-proxy.
	Configz any
}

// Server is the metrics server: /metrics, /healthz, /proxyMode, /configz,
// and optionally /debug/hns, /debug/pprof and /debug/flags/v.
type Server struct {
	opts  ServerOptions
	debug atomic.Pointer[DebugSource]
	// debugSlots bounds concurrent /debug/hns renders (DebugRenders).
	debugSlots chan struct{}
	// debugWait bounds how long a /debug/hns request waits for a slot and
	// its view (debugWaitDefault; tests shorten it).
	debugWait time.Duration
	mux       *http.ServeMux
}

// NewServer builds the handler; Serve runs it.
func NewServer(opts ServerOptions) *Server {
	s := &Server{opts: opts, mux: http.NewServeMux(), debugSlots: make(chan struct{}, DebugRenders), debugWait: debugWaitDefault}
	s.mux.Handle("/metrics", Handler())
	// kube-proxy serves the health-check SLIs beside its metrics.
	slis.SLIMetricsWithReset{}.Install(s.mux)
	// /healthz and /healthz/ping: the apiserver handler kube-proxy installs.
	healthz.InstallHandler(s.mux)
	s.mux.HandleFunc("/proxyMode", func(w http.ResponseWriter, _ *http.Request) { writeText(w, http.StatusOK, opts.ProxyMode) })
	s.mux.HandleFunc("/configz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"kubeproxy.config.k8s.io": opts.Configz})
	})
	if opts.EnableDebug {
		s.mux.HandleFunc("/debug/hns", s.serveDebug)
	}
	if opts.EnableProfiling {
		s.mux.HandleFunc("/debug/pprof/", pprof.Index)
		s.mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		s.mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		s.mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		s.mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		s.mux.HandleFunc("/debug/flags/v", putVerbosity)
	}
	return s
}

// ServeHTTP serves the server's endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// SetDebugSource installs the proxier's view for /debug/hns.
func (s *Server) SetDebugSource(src DebugSource) { s.debug.Store(&src) }

func (s *Server) serveDebug(w http.ResponseWriter, r *http.Request) {
	src := s.debug.Load()
	if src == nil || *src == nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "the proxier has not started yet"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.debugWait)
	defer cancel()
	// A view of a large node is megabytes: render a few at a time, so a
	// burst of requests queues instead of holding one view each.
	select {
	case s.debugSlots <- struct{}{}:
		defer func() { <-s.debugSlots }()
	case <-ctx.Done():
		if r.Context().Err() == nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "busy: too many /debug/hns requests; retry"})
		}
		return
	}
	state, err := (*src)(ctx)
	if r.Context().Err() != nil {
		return // the client went away: nobody reads an answer
	}
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, state)
}

// Serve serves on ln until ctx ends; it closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return httpserve.Serve(ctx, ln, s, "metrics")
}

func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = fmt.Fprint(w, body)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code, data = http.StatusInternalServerError, []byte(fmt.Sprintf(`{"error": %q}`, err.Error()))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(data)
	_, _ = w.Write([]byte("\n"))
}
