package httpserve

import (
	"net"
	"sync"
)

const (
	// ConnsPerServer caps the connections of the healthz and metrics
	// servers each: far above what kubelet probes and scrapers open.
	ConnsPerServer = 64
	// ConnsPerHealthCheckPort caps one Service's health-check node port
	// (a cloud load balancer probes it from a few addresses).
	ConnsPerHealthCheckPort = 16
	// ConnsAllHealthCheckPorts caps all health-check node ports together:
	// their number grows with Services, which tenants create.
	ConnsAllHealthCheckPorts = 256
	// MaxHeaderBytes bounds a request's headers (net/http answers 431
	// past it). Its default, 1 MiB, let the connections above hold about
	// 400 MB of headers at once; probes and scrapes, a bearer token
	// included, send a few KiB.
	MaxHeaderBytes = 64 << 10
)

// Budget is a connection count shared by several listeners.
type Budget chan struct{}

// NewBudget returns a budget of n connections.
func NewBudget(n int) Budget { return make(Budget, n) }

// Limit returns ln holding at most n open connections, and, with a non-nil
// shared budget, only while the budget has room. Accept waits for a slot
// (the kernel's backlog holds newcomers); a connection's slots are released
// when it closes.
func Limit(ln net.Listener, n int, shared Budget) net.Listener {
	return &limitedListener{Listener: ln, own: make(Budget, n), shared: shared, done: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	own, shared Budget
	closeOnce   sync.Once
	done        chan struct{}
}

func (l *limitedListener) acquire(b Budget) bool {
	if b == nil {
		return true
	}
	select {
	case b <- struct{}{}:
		return true
	case <-l.done:
		return false
	}
}

func release(b Budget) {
	if b != nil {
		<-b
	}
}

func (l *limitedListener) Accept() (net.Conn, error) {
	if !l.acquire(l.own) {
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		release(l.own)
		return nil, err
	}
	// The shared budget is taken only for a real connection: a listener
	// waiting for one must not sit on a slot the others need. While it
	// waits, this listener holds one accepted connection and accepts no
	// other.
	if !l.acquire(l.shared) {
		c.Close()
		release(l.own)
		return nil, net.ErrClosed
	}
	return &limitedConn{Conn: c, release: func() { release(l.shared); release(l.own) }}, nil
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
