package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// pathEcho changes how the served HNS answers (sim.Echo).
const pathEcho = "/echo"

// EchoRequest names the served simulator's echo options, comma-separated
// as sim.ParseEcho reads them ("" for none, "all" for every one).
type EchoRequest struct {
	Echo string `json:"echo"`
}

// SetEcho changes how the served simulator answers.
func (c *Client) SetEcho(ctx context.Context, req EchoRequest) error {
	return c.call(ctx, "SetEcho", http.MethodPost, pathEcho, req, nil)
}

func (s *server) echo(w http.ResponseWriter, r *http.Request) {
	serveSetter(w, r, "SetEcho", s.x.SetEcho)
}

// hnsAddedFields are fields HNS adds to the objects it returns that hnslb
// does not model: the v1 view of a load balancer shows them
// (Get-HnsPolicyList in the knabben blog post of 2021-12-18, and
// projectcalico/calico#8465).
var hnsAddedFields = map[string]any{
	"State":     2,
	"Version":   38654705666,
	"IsApplied": false,
	"Resources": map[string]any{"AllocationOrder": 1, "State": 1, "VfpOperationTime": 0},
}

// WithUnknownFields adds hnsAddedFields to every load balancer and endpoint
// next answers while on() is true (sim.Echo.UnknownFields): a client must
// ignore what it does not know, as hcn's JSON decoding does.
func WithUnknownFields(next http.Handler, on func() bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		objects := strings.HasPrefix(p, pathLoadBalancers) || strings.HasPrefix(p, pathEndpoints) ||
			strings.HasPrefix(p, pathNetworks) && strings.HasSuffix(p, pathEndpoints)
		if !objects || !on() {
			next.ServeHTTP(w, r)
			return
		}
		rec := &bufferedWriter{w: w, header: w.Header(), status: http.StatusOK}
		next.ServeHTTP(rec, r)
		body := rec.body.Bytes()
		if rec.status < 300 {
			body = addFields(body)
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.status)
		_, _ = w.Write(body)
	})
}

// addFields adds hnsAddedFields to a JSON object or to each object of a
// JSON array; anything else is returned as it is.
func addFields(body []byte) []byte {
	var one map[string]any
	var many []map[string]any
	var out any
	switch {
	case json.Unmarshal(body, &one) == nil:
		addMissing(one)
		out = one
	case json.Unmarshal(body, &many) == nil:
		for _, o := range many {
			addMissing(o)
		}
		out = many
	default:
		return body
	}
	if b, err := json.Marshal(out); err == nil {
		return b
	}
	return body
}

func addMissing(o map[string]any) {
	for k, v := range hnsAddedFields {
		if _, ok := o[k]; !ok {
			o[k] = v
		}
	}
}

// bufferedWriter holds a response so that it can be rewritten.
type bufferedWriter struct {
	w      http.ResponseWriter // the connection's
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header         { return b.header }
func (b *bufferedWriter) WriteHeader(status int)      { b.status = status }
func (b *bufferedWriter) Write(p []byte) (int, error) { return b.body.Write(p) }

// SetReadDeadline hands the bound on the request body's reading (decode)
// on to the connection: without it a stalled upload held a body slot for
// as long as its client stayed.
func (b *bufferedWriter) SetReadDeadline(t time.Time) error {
	return http.NewResponseController(b.w).SetReadDeadline(t)
}
