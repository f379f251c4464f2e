package healthcheck

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
)

// Generations of distinct Services come and go, some on a port another
// socket holds (a failure reported and retried), some with a client's
// connection held open: once they are gone, no server, failure record or
// slot of the shared connection budget is left of them.
func TestChurnLeavesNoHealthCheckBehind(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := uint16(taken.Addr().(*net.TCPAddr).Port)
	s := NewServiceHealthServer("win-1", events.NewFakeRecorder(100), []string{"127.0.0.1"}, &fakeProxyHealth{healthy: true})
	t.Cleanup(s.Close)
	for g := range 5 {
		gen := map[types.NamespacedName]uint16{}
		for i := range 4 {
			port := uint16(0)
			if i == 0 {
				port = takenPort
			}
			gen[types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("g%d-svc%d", g, i)}] = port
		}
		for range 2 { // the taken port is retried
			if err := s.SyncServices(gen); err != nil {
				t.Fatal(err)
			}
		}
		var held []net.Conn
		var addrs []string
		for nsn := range gen {
			for _, a := range s.Addrs(nsn) {
				addrs = append(addrs, a.String())
				c, err := net.Dial("tcp", a.String())
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, c)
			}
		}
		waitFor(t, fmt.Sprintf("generation %d: the %d connections held taking their slots", g, len(held)), func() bool { return len(s.conns) == len(held) })
		if err := s.SyncServices(nil); err != nil {
			t.Fatal(err)
		}
		s.mu.RLock()
		services, failing := len(s.services), len(s.failing)
		s.mu.RUnlock()
		if services+failing != 0 {
			t.Fatalf("generation %d: %d servers and %d failures kept of Services gone", g, services, failing)
		}
		for _, a := range addrs {
			if c, err := net.Dial("tcp", a); err == nil {
				c.Close()
				t.Fatalf("generation %d: %s still accepts connections", g, a)
			}
		}
		// Closing a server closes its connections, which give back their slots.
		waitFor(t, fmt.Sprintf("generation %d: the shared connection budget given back", g), func() bool { return len(s.conns) == 0 })
		for _, c := range held {
			c.Close()
		}
	}
}

// waitFor polls cond until it holds; convergence, not speed, is asserted.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("%s never happened", what)
	}
}
