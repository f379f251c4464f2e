package remote

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// maxIdleConns bounds the connections a Client keeps open between calls.
const maxIdleConns = 16

// framesConn is one connection of the frames wire, held by one call at a time.
type framesConn struct {
	net.Conn
	r *bufio.Reader
	// greeted is set once the preface went out with a request.
	greeted bool
	// reused is set when a call before this one completed on it.
	reused bool
	buf    []byte
}

// connPool keeps a Client's idle connections.
type connPool struct {
	socket string
	dialer net.Dialer

	mu   sync.Mutex
	idle []*framesConn
}

func (p *connPool) get(ctx context.Context) (*framesConn, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	nc, err := p.dialer.DialContext(ctx, "unix", p.socket)
	if err != nil {
		return nil, err
	}
	return &framesConn{Conn: nc, r: bufio.NewReaderSize(nc, 16<<10)}, nil
}

func (p *connPool) put(c *framesConn) {
	c.reused = true
	if cap(c.buf) > 64<<10 { // a large request's buffer is not kept
		c.buf = nil
	}
	p.mu.Lock()
	if len(p.idle) < maxIdleConns {
		p.idle = append(p.idle, c)
		c = nil
	}
	p.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

func (p *connPool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		c.Close()
	}
}

// framesReply is a successful round trip's answer; the caller reads Body and
// closes it, which gives the connection back once the body was read whole.
type framesReply struct {
	StatusCode int
	Body       io.ReadCloser
}

// replyBody is a reply's body on its connection.
type replyBody struct {
	chunkReader
	conn    *framesConn
	pool    *connPool
	release func() bool
	closed  bool
}

func (b *replyBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	// A deadline or cancel that fired may have cut the connection mid-call.
	if b.release() && b.done {
		_ = b.conn.SetDeadline(time.Time{})
		b.pool.put(b.conn)
		return nil
	}
	return b.conn.Close()
}

// roundTrip sends one request and reads its status; the body follows.
func (p *connPool) roundTrip(ctx context.Context, method, target string, body []byte) (*framesReply, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, err := p.get(ctx)
		if err != nil {
			return nil, err
		}
		release := bindContext(ctx, c.Conn)
		c.buf = c.buf[:0]
		if !c.greeted {
			c.buf = append(c.buf, framesPreface...)
			c.greeted = true
		}
		c.buf = appendUint32(c.buf, len(method)+1+len(target))
		c.buf = append(append(append(c.buf, method...), ' '), target...)
		c.buf = appendUint32(c.buf, len(body))
		c.buf = append(c.buf, body...)
		_, err = c.Write(c.buf)
		var status int
		if err == nil {
			status, err = readUint32(c.r)
		}
		if err != nil {
			release()
			c.Close()
			// A kept connection the server has since closed: the
			// request never reached it (the write failed), or a lookup,
			// which is safe to repeat, found the connection closed.
			if c.reused && ctx.Err() == nil && (isWriteError(err) || method == http.MethodGet && errors.Is(err, io.EOF)) {
				continue
			}
			return nil, err
		}
		return &framesReply{StatusCode: status, Body: &replyBody{chunkReader: chunkReader{r: c.r}, conn: c, pool: p, release: release}}, nil
	}
}

// isWriteError reports a write the peer refused (a closed connection), not
// one a deadline cut short.
func isWriteError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "write" && !errors.Is(err, os.ErrDeadlineExceeded)
}

// bindContext makes ctx's deadline and cancellation end c's I/O, as an
// HTTP request's context does. The returned release reports whether c is
// untouched by ctx and may be kept.
func bindContext(ctx context.Context, c net.Conn) (release func() bool) {
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if ctx.Done() == nil {
		return func() bool { return true }
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	return func() bool { return stop() && ctx.Err() == nil }
}

// contextError is ctx's error, also in the instant between a connection's
// deadline passing and ctx's own timer marking it done.
func contextError(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}
