package remote

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// A frames call's context ends when its client goes away, as net/http ends
// an HTTP request's: a caller whose deadline passed or who was cancelled
// (or killed) closes its connection, and the simulator must see that
// context end as it would in-process, where a call given up during its
// first RPC's latency never reaches HNS and is not counted, and one given
// up during the rest stops waiting. Without it the server applied,
// counted and waited out every call its caller had abandoned.
//
// Once the call's body is read whole the connection carries nothing until
// the reply (a Client sends its next call only after it), so a read there
// that meets the end of the stream is the client gone.

// callBody is a frames call's body; ended runs once it is read whole.
type callBody struct {
	io.LimitedReader
	ended func()
}

func (b *callBody) Read(p []byte) (int, error) {
	n, err := b.LimitedReader.Read(p)
	if b.N <= 0 && b.ended != nil {
		ended := b.ended
		b.ended = nil
		ended()
	}
	return n, err
}

// peerWatch ends a call's context when its client goes away.
type peerWatch struct {
	ctx    context.Context
	cancel context.CancelFunc
	conn   net.Conn
	r      *bufio.Reader
	body   *callBody
	done   chan struct{} // nil until the watch began
}

// watchPeer watches c for the end of req's client, from the moment body is
// read whole (at once if it is empty).
func watchPeer(c net.Conn, r *bufio.Reader, req *http.Request, body *callBody) *peerWatch {
	ctx, cancel := context.WithCancel(req.Context())
	p := &peerWatch{ctx: ctx, cancel: cancel, conn: c, r: r, body: body}
	if body.N <= 0 {
		p.start()
	} else {
		body.ended = p.start
	}
	return p
}

// start reads ahead on the connection; the handler reads no more of it.
func (p *peerWatch) start() {
	p.done = make(chan struct{})
	// The body's read deadline (framesWriter.SetReadDeadline) is spent.
	_ = p.conn.SetReadDeadline(time.Time{})
	go func() {
		defer close(p.done)
		if _, err := p.r.Peek(1); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			p.cancel()
		}
	}()
}

// stop ends the watch once the handler returned, leaving what it read
// ahead in r for the next call, and releases the call's context. What the
// handler left of the body is skipped afterwards without a watch.
func (p *peerWatch) stop() {
	p.body.ended = nil
	if p.done != nil {
		_ = p.conn.SetReadDeadline(time.Unix(1, 0))
		<-p.done
		_ = p.conn.SetReadDeadline(time.Time{})
	}
	p.cancel()
}
