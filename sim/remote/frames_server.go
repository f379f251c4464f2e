package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Timeouts of a served frames connection: for a new connection's first
// byte and for a reply to go out (a client that stops reading).
const (
	framesHelloTimeout = 10 * time.Second
	framesWriteTimeout = time.Minute
)

// withFrames serves h on l's connections that speak the frames wire (every
// Client's) and hands the others to whoever Accepts from the returned
// listener, to serve as HTTP: Serve passes it to http.Server.Serve with the
// same handler. Closing it closes l and every frames connection. A
// handler's panic is logged through errorLog, or the standard logger when
// it is nil (as net/http does).
func withFrames(l net.Listener, h http.Handler, errorLog *log.Logger) net.Listener {
	ctx, cancel := context.WithCancel(context.Background())
	f := &framesListener{Listener: l, h: h, errorLog: errorLog, ctx: ctx, cancel: cancel,
		accepted: make(chan accepted), conns: map[net.Conn]struct{}{}}
	go f.acceptLoop()
	return f
}

type accepted struct {
	c   net.Conn
	err error
}

type framesListener struct {
	net.Listener
	h        http.Handler
	errorLog *log.Logger // nil: the standard logger, as net/http does
	ctx      context.Context
	cancel   context.CancelFunc
	accepted chan accepted

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func (f *framesListener) acceptLoop() {
	for {
		c, err := f.Listener.Accept()
		if err == nil {
			go f.sniff(c)
			continue
		}
		select {
		case f.accepted <- accepted{err: err}:
		case <-f.ctx.Done():
			return
		}
		if errors.Is(err, net.ErrClosed) {
			return
		}
	}
}

// Accept returns the next connection that is not a frames one.
func (f *framesListener) Accept() (net.Conn, error) {
	select {
	case a := <-f.accepted:
		return a.c, a.err
	case <-f.ctx.Done():
		return nil, net.ErrClosed
	}
}

func (f *framesListener) Close() error {
	f.mu.Lock()
	f.closed = true
	conns := f.conns
	f.conns = nil
	f.mu.Unlock()
	f.cancel()
	for c := range conns {
		c.Close()
	}
	return f.Listener.Close()
}

// track adds c to the connections Close closes; false once closed.
func (f *framesListener) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.conns[c] = struct{}{}
	return true
}

func (f *framesListener) untrack(c net.Conn) {
	f.mu.Lock()
	delete(f.conns, c)
	f.mu.Unlock()
	c.Close()
}

// sniff tells a frames connection from an HTTP one by its first byte.
func (f *framesListener) sniff(c net.Conn) {
	r := bufio.NewReaderSize(c, 16<<10)
	_ = c.SetReadDeadline(time.Now().Add(framesHelloTimeout))
	first, err := r.Peek(1)
	if err != nil {
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if first[0] == framesPreface[0] {
		if !f.track(c) {
			c.Close()
			return
		}
		defer f.untrack(c)
		f.serve(c, r)
		return
	}
	select {
	case f.accepted <- accepted{c: &peekedConn{Conn: c, r: r}}:
	case <-f.ctx.Done():
		c.Close()
	}
}

// peekedConn is an HTTP connection whose first bytes were read by sniff.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (p *peekedConn) Read(b []byte) (int, error) { return p.r.Read(b) }

// serve answers c's calls one at a time until it closes or breaks.
func (f *framesListener) serve(c net.Conn, r *bufio.Reader) {
	hello := make([]byte, len(framesPreface))
	if _, err := io.ReadFull(r, hello); err != nil || string(hello) != framesPreface {
		return
	}
	w := &framesWriter{w: bufio.NewWriterSize(c, 16<<10), conn: c}
	for {
		req, body, err := f.readRequest(r)
		if err != nil {
			return
		}
		peer := watchPeer(c, r, req, body)
		req = req.WithContext(peer.ctx)
		_ = c.SetWriteDeadline(time.Now().Add(framesWriteTimeout))
		w.reset()
		ok := f.handle(w, req)
		peer.stop()
		if !ok || w.finish() != nil {
			return
		}
		// What the handler left of the body comes before the next call.
		if _, err := io.Copy(io.Discard, body); err != nil {
			return
		}
		_ = c.SetReadDeadline(time.Time{}) // a body's deadline (SetReadDeadline) ends with its call
	}
}

// readRequest reads one call's head; a malformed one ends the connection.
// The body stays on the connection for the handler to read, so the bound
// on bodies read at once (bodySlots, as over HTTP) holds for frames too.
func (f *framesListener) readRequest(r *bufio.Reader) (*http.Request, *callBody, error) {
	head, err := readSized(r, maxFrameHead, "request head")
	if err != nil {
		return nil, nil, err
	}
	n, err := readUint32(r)
	if err != nil {
		return nil, nil, unexpected(err)
	}
	if n > maxBody {
		return nil, nil, fmt.Errorf("request body of %d bytes: at most %d", n, maxBody)
	}
	method, target, ok := strings.Cut(string(head), " ")
	if !ok || !strings.HasPrefix(target, "/") {
		return nil, nil, errors.New("malformed request head")
	}
	body := &callBody{LimitedReader: io.LimitedReader{R: r, N: int64(n)}}
	req, err := http.NewRequestWithContext(f.ctx, method, "http://hns"+target, body)
	if err != nil {
		return nil, nil, err
	}
	req.ContentLength = int64(n)
	if n > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, body, nil
}

// handle runs the handler. One that aborts (as net/http lets a handler do
// with http.ErrAbortHandler) cuts the reply and the connection. A panic is
// logged with its call and stack, as net/http logs one; before the reply
// began, the call is answered E_FAIL naming the panic and the connection
// serves on (a cut would read as HNS down, and a client repeats a lookup
// that met one), after it the reply and the connection are cut.
func (f *framesListener) handle(w *framesWriter, req *http.Request) (ok bool) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		ok = false
		if v != http.ErrAbortHandler {
			stack := make([]byte, 64<<10)
			stack = stack[:runtime.Stack(stack, false)]
			f.logf("remote: panic serving frames call %s %s: %v\n%s", req.Method, req.URL.RequestURI(), v, stack)
			if !w.started {
				w.reset()
				reply(w, "", nil, fmt.Errorf("%s %s: the server's handler panicked: %v", req.Method, req.URL.RequestURI(), v))
				ok = w.err == nil
				return
			}
		}
		_ = w.w.Flush() // what was written goes out, the rest is cut
	}()
	f.h.ServeHTTP(w, req)
	return w.err == nil
}

func (f *framesListener) logf(format string, args ...any) {
	if f.errorLog != nil {
		f.errorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}

// framesWriter is the http.ResponseWriter of a frames reply.
type framesWriter struct {
	w       *bufio.Writer
	conn    net.Conn
	header  http.Header
	started bool
	err     error
}

func (w *framesWriter) reset() {
	w.header = http.Header{}
	w.started = false
	w.err = nil
}

func (w *framesWriter) Header() http.Header { return w.header }

// SetReadDeadline bounds the reading of the request's body, as
// http.ResponseController does over HTTP.
func (w *framesWriter) SetReadDeadline(t time.Time) error { return w.conn.SetReadDeadline(t) }

func (w *framesWriter) WriteHeader(status int) {
	if w.started {
		return
	}
	w.started = true
	w.put(appendUint32(nil, status))
}

func (w *framesWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if len(p) == 0 {
		return 0, w.err
	}
	w.put(appendUint32(nil, len(p)))
	w.put(p)
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

func (w *framesWriter) put(b []byte) {
	if w.err == nil {
		_, w.err = w.w.Write(b)
	}
}

// finish ends the body and sends what is buffered.
func (w *framesWriter) finish() error {
	w.WriteHeader(http.StatusOK)
	w.put(appendUint32(nil, 0))
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

// Serve serves srv's handler on l over both wires: frames for Clients,
// HTTP for everything else. Like srv.Serve, it returns when srv is closed
// or shut down (which closes the frames connections too). A handler's
// panic is logged through srv.ErrorLog on both wires.
func Serve(srv *http.Server, l net.Listener) error {
	return srv.Serve(withFrames(l, srv.Handler, srv.ErrorLog))
}
