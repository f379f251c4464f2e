package diag

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/vfp"
)

func mustPacket(t *testing.T, src, dst, proto string) vfp.Packet {
	t.Helper()
	p, err := vfp.ParsePacket(src, dst, proto)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTraceNamesWhatItMeets(t *testing.T) {
	f := newFixture(t)
	in := f.read()
	// Sources chosen so the 5-tuple hash picks each backend once.
	seen := map[string]string{}
	for port := 40000; port < 40100 && len(seen) < 2; port++ {
		tr, err := Trace(in, mustPacket(t, client+":"+strconv.Itoa(port), frontendIP+":80", "tcp"))
		if err != nil {
			t.Fatal(err)
		}
		if tr.LoadBalancer == nil || tr.LoadBalancer.Service != "web/frontend:http" || tr.LoadBalancer.Role != RoleClusterIP {
			t.Fatalf("load balancer %+v", tr.LoadBalancer)
		}
		seen[tr.Outcome] = tr.Backend
		if !strings.Contains(strings.Join(tr.Hops, "\n"), "[web/frontend:http ClusterIP]") {
			t.Errorf("hops do not name the load balancer: %q", tr.Hops)
		}
	}
	if seen["delivered-to-pod"] != "pod web/web-a on win-a" || seen["handed-off"] != "pod web/web-b on win-b" {
		t.Errorf("outcomes by backend: %q", seen)
	}
}

func TestTraceExplainsDrops(t *testing.T) {
	f := newFixture(t)
	in := f.read()
	tr, err := Trace(in, mustPacket(t, "198.51.100.7:40000", ingressIP+":443", "tcp"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Outcome != "dropped" || !hasLine(tr.Notes, "LoadBalancer frontend of web/ingress:http", "externalTrafficPolicy Local") {
		t.Errorf("ETP Local ingress at a node without endpoints: %+v", tr)
	}
	tr, err = Trace(in, mustPacket(t, "198.51.100.7:40000", frontendIP+":80", "tcp"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Outcome != "dropped" || !hasLine(tr.Notes, "cluster IP of web/frontend:http", "not from outside") {
		t.Errorf("ClusterIP from outside: %+v", tr)
	}
	for _, row := range Diagnose(in).LoadBalancers {
		if row.Role == RoleClusterIP && row.Service == "web/frontend:http" {
			if err := f.hns.DeleteLoadBalancerOutOfBand(row.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	tr, err = Trace(f.read(), mustPacket(t, client+":40000", frontendIP+":80", "tcp"))
	if err != nil {
		t.Fatal(err)
	}
	// Without its load balancer a cluster IP is an address like any other.
	if tr.LoadBalancer != nil || !hasLine(tr.Notes, "ClusterIP frontend of web/frontend:http", "HNS has none") {
		t.Errorf("deleted ClusterIP load balancer: %+v", tr)
	}
}

func TestTraceRefusesSendersOnOtherNodes(t *testing.T) {
	in := newFixture(t).read()
	for _, src := range []string{webB + ":40000", otherIP + ":40000"} {
		_, err := Trace(in, mustPacket(t, src, frontendIP+":80", "tcp"))
		if err == nil || !strings.Contains(err.Error(), "run hnsproxy-diag on "+other) {
			t.Errorf("source %s: %v", src, err)
		}
	}
}
