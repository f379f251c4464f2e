package healthcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/httpserve"
)

// ProxyHealthChecker is what the service health checks consult besides the endpoint count.
type ProxyHealthChecker interface {
	Health() ProxyHealth
}

// ServiceHealthServer serves the health-check node ports of Services with
// externalTrafficPolicy Local, one HTTP server per port and listen IP. Each
// listen IP is served on its own, as kube-proxy's per-family servers are: a
// port that cannot be opened on one listen IP leaves the Service served on
// the others, and is retried on that IP alone.
type ServiceHealthServer struct {
	nodeName  string
	recorder  events.EventRecorder // may be nil
	listenIPs []string
	health    ProxyHealthChecker

	// conns is shared by every health-check node port of this server.
	conns httpserve.Budget

	mu sync.RWMutex
	// services holds every Service wanted, whether or not its port is open
	// on any listen IP.
	services map[types.NamespacedName]*hcInstance
	// failing holds, for each Service and listen IP where its port could
	// not be opened, the last failure reported. A taken port is retried
	// every sync; only a new failure is logged as an error and raises an
	// event, so a port that stays taken does not fill the log and the
	// event stream.
	failing map[listenKey]openFailure
}

// listenKey is one Service's health check on one listen IP.
type listenKey struct {
	nsn types.NamespacedName
	ip  string
}

// openFailure is a health-check port that could not be opened, and why.
type openFailure struct {
	port uint16
	err  string
}

type hcInstance struct {
	port uint16
	// listeners are the open listen IPs' servers, keyed by listen IP; a
	// listen IP missing is retried on the next sync.
	listeners map[string]*hcListener
	endpoints LocalEndpoints // local endpoints of the service on this node
}

// LocalEndpoints counts a Service's ready endpoints on this node (distinct
// IPs) in each IP family. kube-proxy runs a health check server per family,
// on that family's any-address, counting that family's endpoints alone; a
// listener here answers likewise with the count of its listen IP's family.
type LocalEndpoints struct {
	IPv4, IPv6 int
}

// of is the count a listener on listenIP answers with.
func (l LocalEndpoints) of(listenIP string) int {
	if networkFor(listenIP) == "tcp6" {
		return l.IPv6
	}
	return l.IPv4
}

// hcListener is a health check's server on one listen IP.
type hcListener struct {
	server *http.Server
	ln     net.Listener
}

// NewServiceHealthServer returns a server with no services. listenIPs are
// the node addresses to listen on (kube-proxy listens on 0.0.0.0 and/or ::,
// one per IP family); empty means 0.0.0.0.
func NewServiceHealthServer(nodeName string, recorder events.EventRecorder, listenIPs []string, health ProxyHealthChecker) *ServiceHealthServer {
	if len(listenIPs) == 0 {
		listenIPs = []string{"0.0.0.0"}
	}
	return &ServiceHealthServer{
		nodeName:  nodeName,
		recorder:  recorder,
		listenIPs: listenIPs,
		health:    health,
		conns:     httpserve.NewBudget(httpserve.ConnsAllHealthCheckPorts),
		services:  map[types.NamespacedName]*hcInstance{},
		failing:   map[listenKey]openFailure{},
	}
}

// SyncServices makes newServices (service → health-check node port) the
// open set: servers for services gone or moved to another port close, new
// ones open, unchanged ones stay. Each listen IP is opened on its own: a
// port that cannot be opened on one is retried there on the next sync,
// while the others serve; it is reported (an error in the log and a
// Warning event on the Service) when it first fails on that listen IP and
// when its failure there changes.
func (s *ServiceHealthServer) SyncServices(newServices map[types.NamespacedName]uint16) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key := range s.failing {
		if _, want := newServices[key.nsn]; !want {
			delete(s.failing, key)
		}
	}
	for nsn, hc := range s.services {
		if port, keep := newServices[nsn]; !keep || port != hc.port {
			klog.V(2).InfoS("Closing healthcheck", "service", nsn, "port", hc.port)
			hc.close()
			delete(s.services, nsn)
		}
	}
	for nsn, port := range newServices {
		hc := s.services[nsn]
		if hc == nil {
			hc = &hcInstance{port: port, listeners: map[string]*hcListener{}}
			s.services[nsn] = hc
		}
		for _, ip := range s.listenIPs {
			if hc.listeners[ip] != nil {
				continue
			}
			key := listenKey{nsn: nsn, ip: ip}
			if _, retry := s.failing[key]; retry {
				klog.V(4).InfoS("Opening healthcheck again", "service", nsn, "port", port, "listenIP", ip)
			} else {
				klog.V(2).InfoS("Opening healthcheck", "service", nsn, "port", port, "listenIP", ip)
			}
			l, err := s.listen(nsn, ip, port)
			if err != nil {
				s.reportOpenFailure(key, port, err)
				continue
			}
			delete(s.failing, key)
			hc.listeners[ip] = l
		}
	}
	return nil
}

// reportOpenFailure logs a port that could not be opened on a listen IP
// and raises an event, unless the last sync reported the same failure for
// the Service on that listen IP: then it logs at --v=4 only.
func (s *ServiceHealthServer) reportOpenFailure(key listenKey, port uint16, err error) {
	nsn := key.nsn
	failure := openFailure{port: port, err: err.Error()}
	if s.failing[key] == failure {
		klog.V(4).InfoS("Healthcheck port still cannot be opened", "service", nsn, "port", port, "listenIP", key.ip, "err", err)
		return
	}
	s.failing[key] = failure
	klog.ErrorS(err, "Failed to start healthcheck", "node", s.nodeName, "service", nsn, "port", port, "listenIP", key.ip)
	if s.recorder != nil {
		ref := &v1.ObjectReference{APIVersion: "v1", Kind: "Service", Namespace: nsn.Namespace, Name: nsn.Name}
		s.recorder.Eventf(ref, nil, v1.EventTypeWarning, hnsevents.ReasonFailedToStartServiceHealthcheck, "Listen",
			"node %s failed to start healthcheck %q on port %d: %v", s.nodeName, nsn.String(), port, err)
	}
}

// SyncEndpoints sets each open service's local endpoint counts; services
// missing from newEndpoints have none.
func (s *ServiceHealthServer) SyncEndpoints(newEndpoints map[types.NamespacedName]LocalEndpoints) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for nsn, hc := range s.services {
		hc.endpoints = newEndpoints[nsn]
	}
	return nil
}

// Addrs returns where a service's health check listens (tests use port
// 0), in the order of the listen IPs; nil when it is open on none.
func (s *ServiceHealthServer) Addrs(nsn types.NamespacedName) []net.Addr {
	s.mu.RLock()
	defer s.mu.RUnlock()
	hc := s.services[nsn]
	if hc == nil {
		return nil
	}
	var addrs []net.Addr
	for _, ip := range s.listenIPs {
		if l := hc.listeners[ip]; l != nil {
			addrs = append(addrs, l.ln.Addr())
		}
	}
	return addrs
}

// Close closes every health-check server.
func (s *ServiceHealthServer) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for nsn, hc := range s.services {
		hc.close()
		delete(s.services, nsn)
	}
}

// listen opens a Service's health-check port on one listen IP and serves it.
func (s *ServiceHealthServer) listen(nsn types.NamespacedName, ip string, port uint16) (*hcListener, error) {
	ln, err := net.Listen(networkFor(ip), net.JoinHostPort(ip, strconv.Itoa(int(port))))
	if err != nil {
		return nil, err
	}
	srv := httpserve.NewServer(s.handler(nsn, ip))
	limited := httpserve.Limit(ln, httpserve.ConnsPerHealthCheckPort, s.conns)
	go func() {
		if err := srv.Serve(limited); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.ErrorS(err, "Healthcheck closed", "service", nsn, "listenIP", ip)
		}
	}()
	return &hcListener{server: srv, ln: limited}, nil
}

// networkFor pins a listen IP's family (tcp4 / tcp6) so that 0.0.0.0 and ::
// can both be open on one port, as kube-proxy's per-family servers are.
func networkFor(ip string) string {
	parsed := net.ParseIP(ip)
	switch {
	case parsed == nil:
		return "tcp"
	case parsed.To4() != nil:
		return "tcp4"
	default:
		return "tcp6"
	}
}

func (hc *hcInstance) close() {
	for ip, l := range hc.listeners {
		if err := l.server.Close(); err != nil {
			klog.ErrorS(err, "Closing health check server", "port", hc.port, "listenIP", ip)
		}
		// The server closes the listener only once its Serve, in a
		// goroutine of its own, has begun: close it here, so that the
		// port is free when the sync returns. The server is closed
		// first, for its Serve to end as closed, not failed; a second
		// close only errs.
		_ = l.ln.Close()
	}
	clear(hc.listeners)
}

// serviceHealthBody is kube-proxy's response body, field for field.
type serviceHealthBody struct {
	Service struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"service"`
	LocalEndpoints      int  `json:"localEndpoints"`
	ServiceProxyHealthy bool `json:"serviceProxyHealthy"`
}

// handler answers for nsn on listenIP, with the count of listenIP's family.
func (s *ServiceHealthServer) handler(nsn types.NamespacedName, listenIP string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		s.mu.RLock()
		hc := s.services[nsn]
		count := 0
		if hc != nil {
			count = hc.endpoints.of(listenIP)
		}
		s.mu.RUnlock()
		if hc == nil {
			http.Error(w, fmt.Sprintf("health check for %s is closed", nsn), http.StatusServiceUnavailable)
			return
		}
		proxyHealthy := s.health.Health().Healthy

		var body serviceHealthBody
		body.Service.Namespace, body.Service.Name = nsn.Namespace, nsn.Name
		body.LocalEndpoints, body.ServiceProxyHealthy = count, proxyHealthy
		data, _ := json.MarshalIndent(body, "", "\t")

		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Load-Balancing-Endpoint-Weight", strconv.Itoa(count))
		if count > 0 && proxyHealthy {
			w.WriteHeader(http.StatusOK)
		} else {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = w.Write(data)
	}
}
