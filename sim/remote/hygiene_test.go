package remote_test

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// Listen replaces only a stale socket: a file or a directory at the path
// is somebody else's and survives.
func TestListenRefusesToReplaceANonSocket(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "state.json")
	if err := os.WriteFile(file, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "empty-dir")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{file, sub} {
		if l, err := remote.Listen(path); err == nil {
			l.Close()
			t.Errorf("Listen(%s) replaced a non-socket", path)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "precious" {
		t.Errorf("file after Listen: %q, %v", b, err)
	}
	if fi, err := os.Stat(sub); err != nil || !fi.IsDir() {
		t.Errorf("directory after Listen: %v, %v", fi, err)
	}
}

// Nonsense fault values are a bad request, and the simulator never sees them.
func TestSetFaultsRefusesNonsense(t *testing.T) {
	ctx := context.Background()
	applied := 0
	_, c, _ := serveSim(t, remote.Extras{SetFaults: func(remote.FaultsRequest) error { applied++; return nil }})
	neg := remote.Duration(-time.Second)
	huge := remote.Duration(24 * time.Hour)
	for name, req := range map[string]remote.FaultsRequest{
		"rate above 1":      {ErrorRate: map[string]float64{"*": 1.5}},
		"negative rate":     {ErrorRate: map[string]float64{"CreateLoadBalancer": -0.1}},
		"NaN rate":          {ErrorRate: map[string]float64{"*": math.NaN()}},
		"committed above 1": {Committed: 2},
		"negative restart":  {Restart: neg},
		"day-long restart":  {Restart: huge},
		"negative latency":  {Latency: &neg},
		"day-long latency":  {Latency: &huge},
		"empty hang":        {Hang: []string{""}},
		"too many hangs":    {HangReply: make([]string, remote.MaxFaultHangs+1)},
		"loss, no restart":  {RestartLoses: "load-balancers"},
		// Code 0 is success: a failure answering it travelled as no HNS
		// error at all and read as HNS down, where in-process it is code 0.
		"code 0": {ErrorRate: map[string]float64{"*": 1}, Errors: []hnslb.ErrorCode{0x6ba, 0}},
	} {
		err := c.SetFaults(ctx, req)
		if !hnslb.IsInvalidParameter(err) {
			t.Errorf("%s: SetFaults = %v, want invalid parameter", name, err)
		}
	}
	if applied != 0 {
		t.Errorf("%d nonsense requests reached the simulator", applied)
	}
	ok := remote.Duration(time.Millisecond)
	if err := c.SetFaults(ctx, remote.FaultsRequest{ErrorRate: map[string]float64{"*": 1}, Committed: 1, Restart: ok, Latency: &ok}); err != nil || applied != 1 {
		t.Errorf("edge values refused: %v (applied %d)", err, applied)
	}
}

// Large bodies are read two at a time: a third request's body is not read
// while two others are still arriving, so parallel uploads cannot hold one
// maximal body each in memory.
func TestRequestBodiesAreReadAFewAtATime(t *testing.T) {
	h := remote.NewServer(sim.New(sim.Options{Seed: 1}), remote.Extras{})
	type upload struct {
		w    *io.PipeWriter
		done chan struct{}
	}
	// start serves a request whose body arrives through a pipe, so a write
	// returns only once the handler reads it (no socket buffers between).
	start := func() upload {
		r, w := io.Pipe()
		u := upload{w: w, done: make(chan struct{})}
		go func() {
			defer close(u.done)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/networks", r))
		}()
		return u
	}
	// write sends one byte; the channel closes once the server has read it.
	write := func(u upload) <-chan struct{} {
		ch := make(chan struct{})
		go func() { u.w.Write([]byte(" ")); close(ch) }()
		return ch
	}
	within := func(ch <-chan struct{}, d time.Duration) bool {
		select {
		case <-ch:
			return true
		case <-time.After(d):
			return false
		}
	}
	a, b := start(), start()
	if !within(write(a), 10*time.Second) || !within(write(b), 10*time.Second) {
		t.Fatal("the first two bodies are not being read")
	}
	c := start()
	cWrote := write(c)
	if within(cWrote, 300*time.Millisecond) {
		t.Fatal("a third body was read while two were in flight")
	}
	a.w.Close() // a's request completes (a bad document) and frees its slot
	<-a.done
	if !within(cWrote, 10*time.Second) {
		t.Fatal("the third body was never read after a slot freed")
	}
	b.w.Close()
	c.w.Close()
	<-b.done
	<-c.done
}
