package remote_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
	"github.com/hnsproxy/hnsproxy/sim/remote/remotetest"
)

// u32 is a frames length or status.
func u32(v int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

// frame is one call on the frames wire.
func frame(head, body string) []byte {
	return append(append(append(u32(len(head)), head...), u32(len(body))...), body...)
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// serveCounted serves h as hnssim does, counts the connections made and
// returns a client of it, and stop, which returns once the socket is closed.
// Closing the server alone is not enough: Serve may not have handed it the
// listener yet, and until Serve returns the socket still accepts a dial (a
// new server at the path then refuses it as taken).
func serveCounted(t *testing.T, h *sim.HNS) (c *remote.Client, path string, counted *countingListener, stop func()) {
	t.Helper()
	path = socketPath(t)
	l, err := remote.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	counted = &countingListener{Listener: l}
	srv := &http.Server{Handler: remote.NewServer(h, remote.Extras{Dump: h.Snapshot})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		remote.Serve(srv, counted)
	}()
	stop = func() {
		srv.Close()
		<-served
	}
	t.Cleanup(stop)
	c = remote.NewClient(path)
	t.Cleanup(c.Close)
	return c, path, counted, stop
}

// Calls one after another share one connection, and HTTP is served on the
// same socket for curl and other tools.
func TestFramesKeepOneConnectionAndHTTPStays(t *testing.T) {
	ctx := context.Background()
	h := sim.New(sim.Options{Seed: 1})
	c, path, counted, _ := serveCounted(t, h)
	n, err := c.CreateNetwork(ctx, l2bridge("cbr0"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := c.GetNetworkByID(ctx, n.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetNetworkByName(ctx, "missing"); !hnslb.IsNotFound(err) {
			t.Fatalf("a missing network: %v, want not found", err)
		}
	}
	if got := counted.n.Load(); got != 1 {
		t.Errorf("41 calls one after another opened %d connections, want 1", got)
	}

	web := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	t.Cleanup(web.CloseIdleConnections)
	resp, err := web.Get("http://hns/networks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var listed []hnslb.Network
	if err := json.NewDecoder(resp.Body).Decode(&listed); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP on the same socket: %d, %v", resp.StatusCode, err)
	}
	if len(listed) != 1 || listed[0].ID != n.ID {
		t.Errorf("HTTP listing: %+v, want network %s", listed, n.ID)
	}
}

// A server that restarted closed the connections a Client keeps: the next
// call goes out on a new one, and a write is applied once.
func TestFramesAcrossAServerRestart(t *testing.T) {
	ctx := context.Background()
	h := sim.New(sim.Options{Seed: 1})
	c, path, _, stop := serveCounted(t, h)
	if _, err := c.CreateNetwork(ctx, l2bridge("before")); err != nil {
		t.Fatal(err)
	}
	stop()
	// The same state, served anew (hnssim --state does this across a restart).
	serveAt(t, path, h)
	if _, err := c.CreateNetwork(ctx, l2bridge("after")); err != nil {
		t.Fatalf("the first call after the restart: %v", err)
	}
	nets, err := h.ListNetworks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(nets) != 2 {
		t.Errorf("networks after the restart: %d, want 2 (each created once)", len(nets))
	}
}

func serveAt(t *testing.T, path string, h *sim.HNS) {
	t.Helper()
	l, err := remote.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: remote.NewServer(h, remote.Extras{})}
	go remote.Serve(srv, l)
	t.Cleanup(func() { srv.Close() })
}

// A call HNS holds ends at its context's deadline, or when the context is
// cancelled, with the context's error; the connection it held is not
// reused for the reply that may still come.
func TestFramesCallsEndWithTheirContext(t *testing.T) {
	h, c, _ := serveSim(t, remote.Extras{})
	ctx := context.Background()
	if _, err := c.CreateNetwork(ctx, l2bridge("cbr0")); err != nil {
		t.Fatal(err)
	}
	h.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpListNetworks}})
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.ListNetworks(dctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a held call past its deadline: %v, want context.DeadlineExceeded", err)
	}
	cctx, cancelNow := context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, cancelNow)
	if _, err := c.ListNetworks(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("a held call cancelled: %v, want context.Canceled", err)
	}
	h.SetFaults(sim.Faults{}) // the held lists answer now, on connections nobody reads
	nets, err := c.ListNetworks(ctx)
	if err != nil || len(nets) != 1 || nets[0].Name != "cbr0" {
		t.Fatalf("the next call: %+v, %v; want cbr0 alone", nets, err)
	}
	if _, err := c.Version(ctx); err != nil {
		t.Fatal(err)
	}
}

// Malformed frames end their connection and nothing else: the server goes
// on serving.
func TestFramesMalformedRequests(t *testing.T) {
	h := sim.New(sim.Options{Seed: 1})
	c, path, _, _ := serveCounted(t, h)
	preface := []byte("\x00hnsframes/1\n")
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	for name, raw := range map[string][]byte{
		"a wrong preface":   []byte("\x00nonsense/9\nGET /version"),
		"a huge head":       cat(preface, u32(1<<31)),
		"a huge body":       cat(preface, u32(12), []byte("GET /version"), u32(1<<31)),
		"no target":         cat(preface, u32(3), []byte("GET"), u32(0)),
		"a relative target": cat(preface, u32(11), []byte("GET version"), u32(0)),
		"a bad method":      cat(preface, u32(13), []byte("G\x01T /version"), u32(0)),
		"cut in the head":   cat(preface, u32(12), []byte("GET /ver")),
	} {
		conn, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write(raw); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c, ok := conn.(*net.UnixConn); ok {
			_ = c.CloseWrite()
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if b, err := io.ReadAll(conn); err != nil || len(b) != 0 {
			t.Errorf("%s: the server answered %q, %v; want the connection closed", name, b, err)
		}
		conn.Close()
	}
	if _, err := c.Version(context.Background()); err != nil {
		t.Fatalf("after malformed frames: %v", err)
	}
}

// FuzzFramesServer: whatever follows the preface, the server neither
// crashes nor stops serving others, and what it answers is whole replies.
func FuzzFramesServer(f *testing.F) {
	f.Add(frame("GET /version", ""))
	f.Add(append(frame("GET /networks", ""), frame("GET /loadbalancers", "")...))
	f.Add(frame("POST /networks", `{"Name":"x","Type":"L2Bridge"}`))
	f.Add(frame("PUT /loadbalancers/x", `{`))
	f.Add(frame("DELETE /endpoints/%zz", ""))
	f.Add([]byte{0, 0, 0, 12, 'G', 'E', 'T'})
	h := sim.New(sim.Options{Seed: 1})
	path := remotetest.Serve(f, remote.NewServer(h, remote.Extras{Dump: h.Snapshot}))
	c := remote.NewClient(path)
	f.Cleanup(c.Close)
	f.Fuzz(func(t *testing.T, raw []byte) {
		conn, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write(append([]byte("\x00hnsframes/1\n"), raw...)); err != nil {
			t.Fatal(err)
		}
		_ = conn.(*net.UnixConn).CloseWrite()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		reply, err := io.ReadAll(conn)
		if err != nil {
			t.Fatalf("reading the replies: %v", err)
		}
		checkWholeReplies(t, reply)
		if _, err := c.Version(context.Background()); err != nil {
			t.Fatalf("the server stopped serving: %v", err)
		}
	})
}

// checkWholeReplies checks b is replies one after another, each a status
// and chunks up to the empty one, and returns their statuses.
func checkWholeReplies(t *testing.T, b []byte) []int {
	t.Helper()
	next := func() (int, bool) {
		if len(b) < 4 {
			return 0, false
		}
		v := int(binary.BigEndian.Uint32(b))
		b = b[4:]
		return v, true
	}
	var statuses []int
	for len(b) > 0 {
		status, ok := next()
		if !ok || status < 100 || status > 599 {
			t.Fatalf("a reply's status %d (ok %v)", status, ok)
		}
		statuses = append(statuses, status)
		for {
			n, ok := next()
			if !ok || n > len(b) {
				t.Fatalf("a chunk of %d bytes with %d left (ok %v)", n, len(b), ok)
			}
			if n == 0 {
				break
			}
			b = b[n:]
		}
	}
	return statuses
}

// A body the handler does not read stays on the connection only until the
// call ends: the next call on it is read from its own head.
func TestFramesBodyAHandlerLeavesIsSkipped(t *testing.T) {
	h := sim.New(sim.Options{Seed: 1})
	_, path, _, _ := serveCounted(t, h)
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := append([]byte("\x00hnsframes/1\n"), frame("GET /version", `{"unread":"body"}`)...)
	req = append(req, frame("GET /version", "")...)
	if _, err := conn.Write(req); err != nil {
		t.Fatal(err)
	}
	// The connection stays open for both replies: a client that closes
	// it (even for writing only) is gone, and its calls end with it.
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	statuses := readReplies(t, conn, 2)
	if len(statuses) != 2 || statuses[0] != http.StatusOK || statuses[1] != http.StatusOK {
		t.Fatalf("replies with statuses %v, want 200 twice", statuses)
	}
}

// readReplies reads n whole replies from r and returns their statuses.
func readReplies(t *testing.T, r io.Reader, n int) []int {
	t.Helper()
	next := func() int {
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			t.Fatalf("reading a reply: %v", err)
		}
		return int(binary.BigEndian.Uint32(b[:]))
	}
	var statuses []int
	for range n {
		statuses = append(statuses, next())
		for size := next(); size != 0; size = next() {
			if _, err := io.CopyN(io.Discard, r, int64(size)); err != nil {
				t.Fatalf("reading a reply's chunk: %v", err)
			}
		}
	}
	return statuses
}
