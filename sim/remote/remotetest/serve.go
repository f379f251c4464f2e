// Package remotetest serves hnssim's HTTP API (remote.NewServer) on a unix
// socket for a test, as hnssim serve does for a node.
package remotetest

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// Serve serves handler on a unix socket until the test ends and returns
// the socket's path, in a fresh folder of the system's temporary one:
// short, as a socket path has a length limit (about 100 bytes) that a
// test's own temporary folder can pass.
func Serve(t testing.TB, handler http.Handler) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hns")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "hns.sock")
	l, err := remote.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler}
	go remote.Serve(srv, l)
	t.Cleanup(func() { srv.Close() })
	return path
}
