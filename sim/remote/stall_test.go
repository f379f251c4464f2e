package remote_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
	"github.com/hnsproxy/hnsproxy/sim/remote/remotetest"
)

// A client that sends a request's head and stops before its body ends
// (stopped, wedged) gets a bad request back and loses its connection,
// rather than holding one of the few body slots (and so, with one more
// such client, every write to the simulator) for as long as it stays.
func TestAStalledBodyIsCutOff(t *testing.T) {
	defer remote.SetBodyReadTimeout(50 * time.Millisecond)()
	h := sim.New(sim.Options{Seed: 1})
	c, path, _, _ := serveCounted(t, h)
	stalled := func() net.Conn {
		conn, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		head := "POST /networks"
		raw := append([]byte("\x00hnsframes/1\n"), u32(len(head))...)
		raw = append(append(append(raw, head...), u32(100)...), '{')
		if _, err := conn.Write(raw); err != nil {
			t.Fatal(err)
		}
		return conn
	}
	// More stalled uploads than there are body slots.
	conns := []net.Conn{stalled(), stalled(), stalled()}
	for i, conn := range conns {
		// A guard against a hang, not a measure: the server answers after
		// its (shortened) body timeout.
		_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		r := bufio.NewReader(conn)
		var status [4]byte
		if _, err := io.ReadFull(r, status[:]); err != nil {
			t.Fatalf("stalled upload %d: no answer: %v", i, err)
		}
		if got := binary.BigEndian.Uint32(status[:]); got != http.StatusBadRequest {
			t.Errorf("stalled upload %d: status %d, want %d", i, got, http.StatusBadRequest)
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			t.Errorf("stalled upload %d: connection not closed after the answer: %v", i, err)
		}
	}
	if _, err := c.CreateNetwork(context.Background(), l2bridge("cbr0")); err != nil {
		t.Fatalf("a write after stalled uploads: %v", err)
	}
}

// Over HTTP (curl and other tools on the same socket) the same holds.
func TestAStalledHTTPBodyIsCutOff(t *testing.T) {
	defer remote.SetBodyReadTimeout(50 * time.Millisecond)()
	_, path, _, _ := serveCounted(t, sim.New(sim.Options{Seed: 1}))
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /networks HTTP/1.1\r\nHost: hns\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // a guard against a hang
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled upload: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d, want %d", resp.StatusCode, http.StatusBadRequest)
	}
}

// Under the unknown-fields echo (hnssim --echo=unknown-fields), whose
// handler rewrites the answers about load balancers and endpoints, a
// stalled upload of one is cut off all the same.
func TestAStalledBodyIsCutOffWhenAnswersCarryUnknownFields(t *testing.T) {
	defer remote.SetBodyReadTimeout(50 * time.Millisecond)()
	h := sim.New(sim.Options{Seed: 1})
	path := remotetest.Serve(t, remote.WithUnknownFields(remote.NewServer(h, remote.Extras{}), func() bool { return true }))
	for i := range 3 { // more stalled uploads than there are body slots
		conn, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		head := "POST /loadbalancers"
		raw := append([]byte("\x00hnsframes/1\n"), u32(len(head))...)
		raw = append(append(append(raw, head...), u32(100)...), '{')
		if _, err := conn.Write(raw); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second)) // a guard against a hang
		var status [4]byte
		if _, err := io.ReadFull(conn, status[:]); err != nil {
			t.Fatalf("stalled upload %d: no answer: %v", i, err)
		}
		if got := binary.BigEndian.Uint32(status[:]); got != http.StatusBadRequest {
			t.Errorf("stalled upload %d: status %d, want %d", i, got, http.StatusBadRequest)
		}
	}
}
