package healthcheck

import (
	"net"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestAClosedHealthCheckFreesItsPortAtOnce: a Service's health check
// closed by a sync gives its port back before the sync returns, so that
// another Service, or this one back on it, can open it in the next. The
// server's Serve runs in a goroutine of its own: closing the server alone
// left the port open until that goroutine had started.
func TestAClosedHealthCheckFreesItsPortAtOnce(t *testing.T) {
	s := NewServiceHealthServer("win-1", nil, []string{"127.0.0.1"}, &fakeProxyHealth{healthy: true})
	t.Cleanup(s.Close)
	for range 20 {
		if err := s.SyncServices(map[types.NamespacedName]uint16{web: 0}); err != nil {
			t.Fatal(err)
		}
		addr := s.Addrs(web)[0].String()
		if err := s.SyncServices(nil); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp4", addr)
		if err != nil {
			t.Fatalf("the port of a closed health check: %v", err)
		}
		ln.Close()
	}
}
