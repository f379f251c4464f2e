package diag

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

func TestDiagnoseAgreesWithWhatHNSProxyProgrammed(t *testing.T) {
	f := newFixture(t)
	r := Diagnose(f.read())
	if r.Node != self || r.HNSVersion != "13.2" || r.NetworkType != string(hnslb.NetworkTypeL2Bridge) || r.Ownership != "from the state file" {
		t.Errorf("header %+v", r)
	}
	for _, row := range r.LoadBalancers {
		if row.State != StateOK || row.Owner != OwnerHNSProxy {
			t.Errorf("row %+v: want ok and hnsproxy's", row)
		}
	}
	cip := row(t, r, "web/frontend:http", RoleClusterIP)
	if cip.Frontend != frontendIP+":80/TCP->8080" || !strings.Contains(strings.Join(cip.Flags, " "), "DSR") {
		t.Errorf("ClusterIP row %+v", cip)
	}
	want := []Backend{{IP: webA, Pod: "web/web-a", Node: self, Local: true}, {IP: webB, Pod: "web/web-b", Node: other}}
	if len(cip.Backends) != 2 {
		t.Fatalf("backends %+v, want %+v", cip.Backends, want)
	}
	for i, b := range cip.Backends {
		b.EndpointID = ""
		if b != want[i] {
			t.Errorf("backend %d = %+v, want %+v", i, b, want[i])
		}
	}
	row(t, r, "web/frontend:http", RoleNodePort)
	row(t, r, "web/ingress:http", RoleClusterIP)
	for _, row := range r.LoadBalancers {
		if row.Service == "web/ingress:http" && row.Role != RoleClusterIP {
			t.Errorf("an ETP Local frontend without local endpoints has a row: %+v", row)
		}
	}
	if !hasLine(r.Notes, "web/ingress: externalTrafficPolicy Local and no ready endpoint on this node", "health-check node port 31000") {
		t.Errorf("notes lack the ETP Local explanation: %q", r.Notes)
	}
}

// TestDiagnoseUnderEveryEcho: however HNS echoes what hnsproxy wrote
// (flags it may not echo dropped, GUIDs upper-cased, lists reordered...),
// hnsproxy's own load balancers read as ok, as the reconciler adopts them.
func TestDiagnoseUnderEveryEcho(t *testing.T) {
	for _, name := range append(sim.EchoNames(), "all") {
		t.Run(name, func(t *testing.T) {
			echo, err := sim.ParseEcho(name)
			if err != nil {
				t.Fatal(err)
			}
			r := Diagnose(newFixtureEchoing(t, echo).read())
			if len(r.LoadBalancers) == 0 {
				t.Fatal("no rows")
			}
			for _, row := range r.LoadBalancers {
				if row.State != StateOK {
					t.Errorf("row %s %s: %s %q, want ok", row.Service, row.Role, row.State, row.Why)
				}
			}
		})
	}
}

func TestDiagnoseFindsMissingExtraAndForeign(t *testing.T) {
	f := newFixture(t)
	in := f.read()
	var nodePortID string
	for _, row := range Diagnose(in).LoadBalancers {
		if row.Role == RoleNodePort {
			nodePortID = row.ID
		}
	}
	if err := f.hns.DeleteLoadBalancerOutOfBand(nodePortID); err != nil {
		t.Fatal(err)
	}
	foreign, err := f.hns.CreateLoadBalancer(t.Context(), &hnslb.LoadBalancer{
		FrontendVIPs: []string{"10.96.9.9"}, SchemaVersion: hnslb.V2,
		PortMappings:         []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: 80, InternalPort: 80}},
		HostComputeEndpoints: []string{cipBackendID(t, Diagnose(in), webA)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := Diagnose(f.read())
	np := row(t, r, "web/frontend:http", RoleNodePort)
	if np.State != StateMissing || np.ID != "" || np.Owner != "" || !hasLine(np.Why, "HNS has none") || len(np.Backends) != 2 ||
		np.Backends[0].State != "missing" {
		t.Errorf("deleted NodePort row %+v", np)
	}
	var extra *Row
	for i := range r.LoadBalancers {
		if r.LoadBalancers[i].ID == foreign.ID {
			extra = &r.LoadBalancers[i]
		}
	}
	if extra == nil || extra.State != StateExtra || extra.Owner != OwnerForeign || extra.Service != "" || !hasLine(extra.Why, "left alone") ||
		len(extra.Backends) != 1 || extra.Backends[0].Pod != "web/web-a" || extra.Backends[0].State != "unwanted" {
		t.Errorf("foreign row %+v", extra)
	}
	if last := r.LoadBalancers[len(r.LoadBalancers)-1]; last.ID != foreign.ID {
		t.Errorf("the row no Service claims is not last: %+v", last)
	}

	var text bytes.Buffer
	if err := r.WriteTable(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("table:\n%s", text.String())
	for _, want := range []string{"SERVICE", "web/frontend:http  NodePort", "missing", "web/web-a@win-a(10.244.1.10)", "\nWhy:\n", "\nNotes:\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, text.String())
		}
	}
	var back Report
	if b, err := json.Marshal(r); err != nil || json.Unmarshal(b, &back) != nil || len(back.LoadBalancers) != len(r.LoadBalancers) {
		t.Errorf("JSON round trip: %v", err)
	}
}

func TestDiagnoseWithoutStateFile(t *testing.T) {
	f := newFixture(t)
	f.stateFile = ""
	r := Diagnose(f.read())
	if !strings.HasPrefix(r.Ownership, "unknown: ") {
		t.Errorf("Ownership = %q", r.Ownership)
	}
	for _, row := range r.LoadBalancers {
		if row.Owner != OwnerUnknown {
			t.Errorf("row %+v: owner should be unknown", row)
		}
	}
}

func cipBackendID(t *testing.T, r *Report, ip string) string {
	t.Helper()
	for _, b := range row(t, r, "web/frontend:http", RoleClusterIP).Backends {
		if b.IP == ip {
			return b.EndpointID
		}
	}
	t.Fatalf("no backend %s", ip)
	return ""
}

// hasLine reports whether one line contains every part.
func hasLine(lines []string, parts ...string) bool {
	for _, l := range lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}

// TestDiagnoseNamesAnotherEndpointOnAWantedAddress: hnsproxy's remote
// endpoint for a pod on another node is gone and another program's holds
// the address, with another provider address. The rows that lack the pod
// name that endpoint, which is why HNS refuses hnsproxy's own.
func TestDiagnoseNamesAnotherEndpointOnAWantedAddress(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	snap := f.hns.Snapshot()
	// First the load balancer loses the backend while hnsproxy's own
	// endpoint still holds the address: not a holder to name.
	ours := cipBackendID(t, Diagnose(f.read()), webB)
	for _, l := range snap.LoadBalancers {
		if i := slices.Index(l.HostComputeEndpoints, ours); i >= 0 && slices.Contains(l.FrontendVIPs, frontendIP) {
			if err := f.hns.DeleteLoadBalancerOutOfBand(l.ID); err != nil {
				t.Fatal(err)
			}
			l.HostComputeEndpoints = slices.Delete(slices.Clone(l.HostComputeEndpoints), i, i+1)
			if _, err := f.hns.PutLoadBalancerOutOfBand(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	cip := row(t, Diagnose(f.read()), "web/frontend:http", RoleClusterIP)
	if cip.State != StateDiffers || hasLine(cip.Why, "HNS has") {
		t.Fatalf("ClusterIP row without its remote backend %+v: want it missing, with no holder named", cip)
	}
	var networkID string
	for _, ep := range snap.Endpoints {
		if ep.IsRemote() && ep.IP() == webB {
			networkID = ep.HostComputeNetwork
			if err := f.hns.DeleteEndpoint(ctx, ep.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if networkID == "" {
		t.Fatalf("no remote endpoint at %s to start from", webB)
	}
	other, err := f.hns.CreateEndpoint(ctx, networkID, &hnslb.Endpoint{Name: "left-by-another-agent", Flags: hnslb.EndpointFlagsRemoteEndpoint,
		IpConfigurations: []hnslb.IPConfig{{IpAddress: webB}},
		Policies:         []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress, hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: "192.168.9.9"})}})
	if err != nil {
		t.Fatal(err)
	}
	r := Diagnose(f.read())
	cip = row(t, r, "web/frontend:http", RoleClusterIP)
	if cip.State != StateDiffers || !hasLine(cip.Why, "remote endpoint "+other.ID) || !hasLine(cip.Why, "backend "+webB) {
		t.Errorf("ClusterIP row %+v: want the endpoint on %s named", cip, webB)
	}
}

// A load balancer without port mappings on a frontend hnsproxy programs
// is shown as what a failed create can leave (kubernetes/kubernetes#141488),
// whose it is, and that it may hold the port.
func TestDiagnoseShowsALoadBalancerWithoutPortMappings(t *testing.T) {
	f := newFixture(t)
	left, err := f.hns.PutLoadBalancerOutOfBand(hnslb.LoadBalancer{FrontendVIPs: []string{frontendIP}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Diagnose(f.read()).LoadBalancers {
		if r.ID != left.ID {
			continue
		}
		if r.State != StateExtra || r.Owner != OwnerForeign || !hasLine(r.Why, "no port mappings", "kubernetes/kubernetes#141488") {
			t.Errorf("row %+v: want an extra, foreign load balancer named as a failed create's leftover", r)
		}
		return
	}
	t.Errorf("no row for the load balancer without port mappings %s", left.ID)
}

// Under a hung HNS, whose calls ignore their context as hcn's do, the
// diagnosis gives up at its timeout with an error that says HNS may hang,
// where it used to wait for good.
func TestReadWithinGivesUpOnAHungHNS(t *testing.T) {
	f := newFixture(t)
	f.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpListLoadBalancers}})
	t.Cleanup(func() { f.hns.SetFaults(sim.Faults{}) })
	done := make(chan error, 1)
	go func() {
		_, err := ReadWithin(context.Background(), 50*time.Millisecond, Source{HNS: ReadOnly(f.hns), Kube: f.kube, NetworkName: "cbr0", StateFile: f.stateFile})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "HNS may be hung") {
			t.Errorf("read under a hung HNS: %v, want it to say HNS may be hung", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the read still waits on a hung HNS after a minute")
	}
}

// An API server that does not answer (unreachable, or slow under a large
// LIST) is named as what failed: the error does not send the operator to
// restart a healthy HNS.
func TestReadWithinNamesASlowAPIServer(t *testing.T) {
	f := newFixture(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f.kube.PrependReactor("list", "services", func(k8stesting.Action) (bool, runtime.Object, error) {
		<-release // as a LIST the API server never answers; the fake ignores the context
		return false, nil, nil
	})
	_, err := ReadWithin(context.Background(), 50*time.Millisecond, f.source())
	if err == nil || strings.Contains(err.Error(), "HNS may be hung") || !strings.HasPrefix(err.Error(), "listing Services: the API server did not answer") {
		t.Errorf("read under an API server that does not answer: %v, want it named, not HNS", err)
	}
}

// TestToCorrectCountsWhatHNSProxyWouldChange: the rows hnsproxy would
// change (missing, differs, its own left-overs) are what make the command
// exit nonzero; another agent's load balancer is left alone, so it is none.
func TestToCorrectCountsWhatHNSProxyWouldChange(t *testing.T) {
	f := newFixture(t)
	r := Diagnose(f.read())
	if n := r.ToCorrect(); n != 0 {
		t.Errorf("a node as hnsproxy programmed it: %d rows to correct", n)
	}
	if _, err := f.hns.CreateLoadBalancer(t.Context(), &hnslb.LoadBalancer{
		FrontendVIPs: []string{"10.96.9.9"}, SchemaVersion: hnslb.V2,
		PortMappings:         []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: 80, InternalPort: 80}},
		HostComputeEndpoints: []string{cipBackendID(t, r, webA)},
	}); err != nil {
		t.Fatal(err)
	}
	if n := Diagnose(f.read()).ToCorrect(); n != 0 {
		t.Errorf("with a foreign load balancer: %d rows to correct, want 0", n)
	}
	if err := f.hns.DeleteLoadBalancerOutOfBand(row(t, r, "web/frontend:http", RoleNodePort).ID); err != nil {
		t.Fatal(err)
	}
	if n := Diagnose(f.read()).ToCorrect(); n != 1 {
		t.Errorf("with the NodePort load balancer deleted: %d rows to correct, want 1", n)
	}
}

// A row's frontend reads as an address and port do: an IPv6 VIP is
// bracketed, so the port is not taken for the address's last group, and an
// IPv6 NodePort load balancer (no VIP) is "[::]", every node IPv6 address,
// so a dual-stack NodePort's two rows, and their "why" lines, differ.
func TestFrontendTellsIPv6Apart(t *testing.T) {
	pm := []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: 80, InternalPort: 8080}}
	np := []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: 30080, InternalPort: 8080}}
	for _, tc := range []struct {
		lb   hnslb.LoadBalancer
		want string
	}{
		{hnslb.LoadBalancer{FrontendVIPs: []string{frontendIP}, PortMappings: pm}, "10.96.0.20:80/TCP->8080"},
		{hnslb.LoadBalancer{FrontendVIPs: []string{"fd00:96::20"}, PortMappings: pm, Flags: hnslb.LoadBalancerFlagsIPv6}, "[fd00:96::20]:80/TCP->8080"},
		{hnslb.LoadBalancer{PortMappings: np}, "*:30080/TCP->8080"},
		{hnslb.LoadBalancer{PortMappings: np, Flags: hnslb.LoadBalancerFlagsIPv6}, "[::]:30080/TCP->8080"},
		// HNS does not always echo the IPv6 flag; the source VIP tells too.
		{hnslb.LoadBalancer{PortMappings: np, SourceVIP: "2001:db8::11"}, "[::]:30080/TCP->8080"},
	} {
		if got := Frontend(&tc.lb); got != tc.want {
			t.Errorf("Frontend(%+v) = %q, want %q", tc.lb, got, tc.want)
		}
	}
}
