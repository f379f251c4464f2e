package sim

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// The write log (Options.WriteLog): one line for each load balancer or
// endpoint HNS stores, changes, keeps or drops, and one for each write
// call's answer, in the order HNS applied them. It is how a run tells
// afterwards which call made an object nobody claims: a create that failed
// and was applied anyway, one that left a load balancer without port
// mappings, a delete reported done that kept its object.
type writeLog struct{ w io.Writer }

// printf writes one line, stamped with the wall clock. Called with the
// HNS's lock held, so lines keep HNS's order.
func (l writeLog) printf(format string, args ...any) {
	if l.w == nil {
		return
	}
	fmt.Fprintf(l.w, time.Now().UTC().Format("15:04:05.000000 ")+format+"\n", args...)
}

// lb describes a stored load balancer: ID, frontend VIPs, the port mapping,
// the backends.
func (l writeLog) lb(what string, lb *hnslb.LoadBalancer) {
	if l.w == nil {
		return
	}
	port := "no port mapping"
	if len(lb.PortMappings) > 0 {
		pm := lb.PortMappings[0]
		port = fmt.Sprintf("%d:%d->%d", pm.Protocol, pm.ExternalPort, pm.InternalPort)
	}
	l.printf("%s load balancer %s vips=[%s] %s backends=[%s]", what, lb.ID, strings.Join(lb.FrontendVIPs, ","), port,
		strings.Join(lb.HostComputeEndpoints, ","))
}

// endpoint describes a stored endpoint: ID, address, name, remote or not.
func (l writeLog) endpoint(what string, e *hnslb.Endpoint) {
	if l.w == nil {
		return
	}
	l.printf("%s endpoint %s ip=%s name=%q remote=%v network=%s", what, e.ID, e.IP(), e.Name, e.IsRemote(), e.HostComputeNetwork)
}
