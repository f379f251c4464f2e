package healthcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	basemetrics "k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/hnsproxy/hnsproxy/httpserve"
	"github.com/hnsproxy/hnsproxy/metrics"
)

// ToBeDeletedTaint is the Cluster Autoscaler's taint on a node it is about to delete.
const ToBeDeletedTaint = "ToBeDeletedByClusterAutoscaler"

// NodeSource returns this node's Node object, or nil while it is unknown.
type NodeSource interface {
	Node() *v1.Node
}

// ProxierHealth is one IP family's health.
type ProxierHealth struct {
	LastUpdated time.Time `json:"lastUpdated"`
	Healthy     bool      `json:"healthy"`
}

// ProxyHealth is the body of /healthz and /livez (kube-proxy's shape).
type ProxyHealth struct {
	// LastUpdated is the most recent successful sync of any family.
	LastUpdated  time.Time `json:"lastUpdated"`
	CurrentTime  time.Time `json:"currentTime"`
	NodeEligible *bool     `json:"nodeEligible,omitempty"`
	// Healthy is true when every family is.
	Healthy bool                          `json:"healthy"`
	Status  map[v1.IPFamily]ProxierHealth `json:"status,omitempty"`
}

// ProxyHealthServer tracks sync health and serves /healthz and /livez.
type ProxyHealthServer struct {
	clock         clock.Clock
	healthTimeout time.Duration
	nodes         NodeSource

	mu            sync.RWMutex
	lastUpdated   map[v1.IPFamily]time.Time
	oldestPending map[v1.IPFamily]time.Time
	// oldestUnrun is the oldest change queued since a sync last finished,
	// and hns the sync loop's HNS calls, for /livez (liveness.go).
	oldestUnrun map[v1.IPFamily]time.Time
	hns         HNSActivity
	// starting holds the families whose sync loop started and has not
	// finished a sync yet: /livez gives them their start (liveness.go).
	starting map[v1.IPFamily]bool
}

// NewProxyHealthServer returns a health tracker; healthTimeout is
// kube-proxy's 2x sync period. nodes may be nil when there is no node
// information, in which case the node always counts as eligible.
func NewProxyHealthServer(c clock.Clock, healthTimeout time.Duration, nodes NodeSource) *ProxyHealthServer {
	return &ProxyHealthServer{
		clock:         c,
		healthTimeout: healthTimeout,
		nodes:         nodes,
		lastUpdated:   map[v1.IPFamily]time.Time{},
		oldestPending: map[v1.IPFamily]time.Time{},
		oldestUnrun:   map[v1.IPFamily]time.Time{},
		starting:      map[v1.IPFamily]bool{},
	}
}

// SyncLoopStarted records that family's sync loop began, as kube-proxy's
// sync loop marks its family updated before its first sync: /healthz turns
// healthy there (kube-proxy serves it from then on), and a change then
// queued that waits healthTimeout for a sync reaching HNS makes the proxy
// unhealthy, even when no sync ever has. A change queued before the loop
// started is forgiven.
func (hs *ProxyHealthServer) SyncLoopStarted(family v1.IPFamily) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	delete(hs.oldestPending, family)
	hs.lastUpdated[family] = hs.clock.Now()
	hs.starting[family] = true
}

// Updated records a successful sync of family: HNS reflects everything queued so far.
func (hs *ProxyHealthServer) Updated(family v1.IPFamily) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	delete(hs.oldestPending, family)
	delete(hs.oldestUnrun, family)
	delete(hs.starting, family)
	hs.lastUpdated[family] = hs.clock.Now()
}

// QueuedUpdate records that family has a change waiting to be synced. Only
// the oldest pending change counts: later ones do not reset the timer.
func (hs *ProxyHealthServer) QueuedUpdate(family v1.IPFamily) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if _, pending := hs.oldestPending[family]; !pending {
		hs.oldestPending[family] = hs.clock.Now()
	}
	if _, unrun := hs.oldestUnrun[family]; !unrun {
		hs.oldestUnrun[family] = hs.clock.Now()
	}
}

// Health reports the proxy's health. A family is unhealthy once its sync
// loop has started (SyncLoopStarted) or it has synced, and an update has
// been pending for healthTimeout or longer; before that it counts as
// starting up, hence healthy. The proxy is unhealthy while no family's loop
// has started (hnsproxy waits for the HNS network): kube-proxy serves no
// /healthz then, as its proxier, which waits for the network, does not
// exist yet, and a node whose network is missing can serve nothing.
func (hs *ProxyHealthServer) Health() ProxyHealth {
	hs.mu.RLock()
	defer hs.mu.RUnlock()
	now := hs.clock.Now()
	h := ProxyHealth{Healthy: len(hs.lastUpdated) > 0, CurrentTime: now, Status: map[v1.IPFamily]ProxierHealth{}}
	for family, last := range hs.lastUpdated {
		if last.After(h.LastUpdated) {
			h.LastUpdated = last
		}
		healthy := true
		if queued, pending := hs.oldestPending[family]; pending && now.Sub(queued) >= hs.healthTimeout {
			healthy = false
			h.Healthy = false
		}
		h.Status[family] = ProxierHealth{LastUpdated: last, Healthy: healthy}
	}
	return h
}

// NodeEligible reports whether load balancers should send traffic to this
// node: it is known, not being deleted, and not about to be scaled down.
func (hs *ProxyHealthServer) NodeEligible() bool {
	if hs.nodes == nil {
		return true
	}
	node := hs.nodes.Node()
	if node == nil || !node.DeletionTimestamp.IsZero() {
		return false
	}
	for _, t := range node.Spec.Taints {
		if t.Key == ToBeDeletedTaint {
			return false
		}
	}
	return true
}

// Handler serves /healthz and /livez.
func (hs *ProxyHealthServer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", hs.serveHealthz)
	mux.HandleFunc("/livez", hs.serveLivez)
	return mux
}

// ListenAndServe serves on addr until ctx ends.
func (hs *ProxyHealthServer) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("failed to start proxy healthz on %s: %w", addr, err)
	}
	return hs.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends; it closes ln.
func (hs *ProxyHealthServer) Serve(ctx context.Context, ln net.Listener) error {
	return httpserve.Serve(ctx, ln, hs.Handler(), "healthz")
}

func (hs *ProxyHealthServer) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	h := hs.Health()
	eligible := hs.NodeEligible()
	h.NodeEligible = &eligible
	hs.answer(w, h, h.Healthy && eligible, metrics.ProxyHealthzTotal)
}

func (hs *ProxyHealthServer) serveLivez(w http.ResponseWriter, _ *http.Request) {
	h := hs.Liveness()
	hs.answer(w, h, h.Healthy, metrics.ProxyLivezTotal)
}

// answer writes the body and counts the code. A healthy answer reports
// lastUpdated as now, as kube-proxy does for compatibility with clients that
// read it as "the sync loop is running".
func (hs *ProxyHealthServer) answer(w http.ResponseWriter, h ProxyHealth, healthy bool, answers *basemetrics.CounterVec) {
	code := http.StatusServiceUnavailable
	if healthy {
		code = http.StatusOK
		h.LastUpdated = hs.clock.Now()
	}
	answers.WithLabelValues(fmt.Sprint(code)).Inc()
	body, _ := json.Marshal(h)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
