package remote_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// logLines hands each line a server's ErrorLog writes to the test.
type logLines chan string

func (l logLines) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}

// take returns what was logged so far: the server logs before it replies.
func (l logLines) take() string {
	var out strings.Builder
	for {
		select {
		case s := <-l:
			out.WriteString(s)
		default:
			return out.String()
		}
	}
}

// A handler that panics on the frames wire is logged with its call and its
// stack, as net/http logs one over HTTP; before its reply began, the client
// is answered E_FAIL with the panic (not a cut connection, which a client
// takes for HNS down and a lookup repeats), and the connection serves on.
// A panic after the reply began cuts it, logged too; http.ErrAbortHandler
// stays a silent cut, as over HTTP.
func TestFramesHandlerPanicIsLoggedAndAnswered(t *testing.T) {
	ctx := context.Background()
	h := sim.New(sim.Options{Seed: 1})
	inner := remote.NewServer(h, remote.Extras{})
	var lbGets atomic.Int64
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/loadbalancers":
			lbGets.Add(1)
			panic("simulator bug")
		case r.Method == http.MethodGet && r.URL.Path == "/namespaces":
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, "[")
			panic("bug mid-reply")
		case r.Method == http.MethodGet && r.URL.Path == "/endpoints":
			panic(http.ErrAbortHandler)
		}
		inner.ServeHTTP(w, r)
	})
	logged := make(logLines, 16)
	path := socketPath(t)
	l, err := remote.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingListener{Listener: l}
	srv := &http.Server{Handler: handler, ErrorLog: log.New(logged, "", 0)}
	go remote.Serve(srv, counted)
	t.Cleanup(func() { srv.Close() })
	c := remote.NewClient(path)
	t.Cleanup(c.Close)

	if _, err := c.CreateNetwork(ctx, l2bridge("cbr0")); err != nil {
		t.Fatal(err)
	}
	_, err = c.ListLoadBalancers(ctx)
	assertCode(t, "a handler that panicked", err, 0x80004005, func(e error) bool {
		return !hnslb.IsUnavailable(e) && !hnslb.IsNotFound(e)
	})
	if err == nil || !strings.Contains(err.Error(), "simulator bug") {
		t.Errorf("the client's error %v does not carry the panic", err)
	}
	if n := lbGets.Load(); n != 1 {
		t.Errorf("the panicking lookup ran %d times, want once", n)
	}
	out := logged.take()
	for _, want := range []string{"GET /loadbalancers", "simulator bug", "goroutine"} {
		if !strings.Contains(out, want) {
			t.Errorf("the server's log lacks %q:\n%s", want, out)
		}
	}
	if _, err := c.ListNetworks(ctx); err != nil {
		t.Errorf("a call after the panic: %v", err)
	}
	if n := counted.n.Load(); n != 1 {
		t.Errorf("the calls around an answered panic used %d connections, want 1", n)
	}

	if _, err := c.ListNamespaces(ctx); err == nil {
		t.Error("a reply cut by a panic succeeded")
	}
	if out := logged.take(); !strings.Contains(out, "GET /namespaces") || !strings.Contains(out, "bug mid-reply") {
		t.Errorf("a panic mid-reply is not logged with its call:\n%s", out)
	}

	if _, err := c.ListEndpoints(ctx); err == nil {
		t.Error("an aborted reply succeeded")
	}
	if out := logged.take(); out != "" {
		t.Errorf("http.ErrAbortHandler was logged:\n%s", out)
	}
	if _, err := c.ListNetworks(ctx); err != nil {
		t.Errorf("the server after the panics: %v", err)
	}
}
