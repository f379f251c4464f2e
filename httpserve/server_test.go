package httpserve

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func serveOK(t *testing.T) (addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }), "test")
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return ln.Addr().String()
}

// get sends one keep-alive request on c; the channel yields the status
// line once the server answers.
func get(c net.Conn) <-chan string {
	out := make(chan string, 1)
	go func() {
		io.WriteString(c, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		resp.Body.Close()
		out <- resp.Status
	}()
	return out
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func answered(ch <-chan string, d time.Duration) (string, bool) {
	select {
	case s := <-ch:
		return s, true
	case <-time.After(d):
		return "", false
	}
}

// Idle keep-alive connections cannot pile up past the cap: the connection
// after them waits in the backlog until one of them goes.
func TestServeCapsConnections(t *testing.T) {
	addr := serveOK(t)
	idle := make([]net.Conn, ConnsPerServer)
	for i := range idle {
		idle[i] = dial(t, addr)
		if s, ok := answered(get(idle[i]), 10*time.Second); !ok || s != "200 OK" {
			t.Fatalf("connection %d: %q", i, s)
		}
	}
	late := get(dial(t, addr))
	if s, ok := answered(late, 300*time.Millisecond); ok {
		t.Fatalf("connection past the cap served: %q", s)
	}
	idle[0].Close()
	if s, ok := answered(late, 10*time.Second); !ok || s != "200 OK" {
		t.Fatalf("connection past the cap after one closed: %q, answered %v", s, ok)
	}
}

// A connection that sends nothing, and one left idle after a request, are
// closed by the server.
func TestServeClosesSilentAndIdleConnections(t *testing.T) {
	saved := DefaultTimeouts
	DefaultTimeouts = Timeouts{ReadHeader: 100 * time.Millisecond, Read: time.Second, Write: time.Second, Idle: 100 * time.Millisecond}
	t.Cleanup(func() { DefaultTimeouts = saved })
	addr := serveOK(t)

	silent := dial(t, addr)
	keptAlive := dial(t, addr)
	if s, ok := answered(get(keptAlive), 10*time.Second); !ok || s != "200 OK" {
		t.Fatalf("request: %q", s)
	}
	for name, c := range map[string]net.Conn{"silent": silent, "idle keep-alive": keptAlive} {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadAll(c); err != nil {
			t.Errorf("%s connection: not closed by the server: %v", name, err)
		}
	}
}

// Listeners sharing a budget hold at most the budget between them.
func TestLimitSharesABudget(t *testing.T) {
	budget := NewBudget(1)
	var addrs []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
		go srv.Serve(Limit(ln, 8, budget))
		t.Cleanup(func() { srv.Close() })
		addrs = append(addrs, ln.Addr().String())
	}
	first := dial(t, addrs[0])
	if s, ok := answered(get(first), 10*time.Second); !ok || s != "200 OK" {
		t.Fatalf("first: %q", s)
	}
	second := get(dial(t, addrs[1]))
	if s, ok := answered(second, 300*time.Millisecond); ok {
		t.Fatalf("second listener served past the shared budget: %q", s)
	}
	first.Close()
	if s, ok := answered(second, 10*time.Second); !ok || s != "200 OK" {
		t.Fatalf("second after the first closed: %q, answered %v", s, ok)
	}
}

// A request whose headers pass MaxHeaderBytes is answered 431 before they
// are read: anyone who reaches a node may open the servers' connections,
// and at net/http's default of 1 MiB each, the health-check ports' and the
// healthz and metrics servers' caps held about 400 MB of headers at once.
// Headers of a Prometheus scrape with a bearer token fit with room.
func TestServeBoundsRequestHeaders(t *testing.T) {
	addr := serveOK(t)
	for _, c := range []struct {
		size int
		want int
	}{
		{8 << 10, http.StatusOK},
		{MaxHeaderBytes + 8<<10, http.StatusRequestHeaderFieldsTooLarge},
	} {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+strings.Repeat("x", c.size))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%d bytes of headers: %v", c.size, err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%d bytes of headers: %s, want %d", c.size, resp.Status, c.want)
		}
	}
}

// Every timeout reaches the server: net/http stands ReadTimeout in for an
// unset ReadHeaderTimeout or IdleTimeout, so the connection tests above
// pass without them (audit W03, W06).
func TestNewServerUsesDefaultTimeouts(t *testing.T) {
	srv := NewServer(http.NotFoundHandler())
	got := Timeouts{ReadHeader: srv.ReadHeaderTimeout, Read: srv.ReadTimeout, Write: srv.WriteTimeout, Idle: srv.IdleTimeout}
	if got != DefaultTimeouts {
		t.Errorf("server timeouts = %+v, want %+v", got, DefaultTimeouts)
	}
}

// failingListener's Accept fails: a temporary error, such as too many open
// files, which http.Server retries.
type failingListener struct{ net.Listener }

func (failingListener) Accept() (net.Conn, error) {
	return nil, errors.New("accept: too many open files")
}

// An Accept that fails gives its slot back: the server retries, and a
// listener that kept the slots of failed Accepts would stop accepting
// (audit W07).
func TestAFailedAcceptGivesBackItsSlot(t *testing.T) {
	ln := Limit(failingListener{}, 2, nil).(*limitedListener)
	for range 2 {
		if _, err := ln.Accept(); err == nil {
			t.Fatal("Accept of a failing listener: no error")
		}
	}
	if n := len(ln.own); n != 0 {
		t.Errorf("after failed Accepts the listener holds %d of its slots, want 0", n)
	}
}
