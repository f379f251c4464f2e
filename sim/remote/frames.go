package remote

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The frames wire: what Client speaks to a server, instead of HTTP/1.1.
//
// An hcn call on Windows is a synchronous call on the calling thread. Over
// net/http each call also hands the request to the connection's writer
// goroutine and the reply back from its reader goroutine: three wake-ups a
// call, which cost hnsproxy's process several times what hcn's client does
// and are nothing hnsproxy would pay on a node. Over frames the calling
// goroutine writes the request and reads the reply itself on a connection
// it holds for the call. The documents are the same JSON as over HTTP and
// the server routes them through the same handler, so the two wires differ
// only in framing; HTTP stays for curl and other tools on the same socket.
//
// A connection opens with framesPreface (its first byte is never one an
// HTTP request starts with), then carries calls one at a time:
//
//	request: uint32 n | n bytes "METHOD /path?query" | uint32 m | m bytes body
//	reply:   uint32 HTTP status | chunks of (uint32 n | n bytes body), ended by uint32 0
//
// Integers are big-endian. A reply's body comes in chunks so that a server
// can stream a listing and a Client decode it as it arrives (walk.go).
const framesPreface = "\x00hnsframes/1\n"

// maxFrameHead bounds a request's method and target.
const maxFrameHead = 64 << 10

func appendUint32(b []byte, v int) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }

func readUint32(r io.Reader) (int, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return int(binary.BigEndian.Uint32(b[:])), nil
}

// readSized reads a length-prefixed field of at most limit bytes.
func readSized(r io.Reader, limit int, what string) ([]byte, error) {
	n, err := readUint32(r)
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%s of %d bytes: at most %d", what, n, limit)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, unexpected(err)
	}
	return b, nil
}

// unexpected is err where more was promised: an EOF there is a cut.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// chunkReader reads a reply's body: its chunks, until the empty one.
type chunkReader struct {
	r    *bufio.Reader
	left int
	done bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	for c.left == 0 {
		n, err := readUint32(c.r)
		if err != nil {
			return 0, unexpected(err)
		}
		if n == 0 {
			c.done = true
			return 0, io.EOF
		}
		c.left = n
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= n
	if err != nil {
		return n, unexpected(err)
	}
	return n, nil
}
