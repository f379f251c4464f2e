package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

func TestNamedOurs(t *testing.T) {
	remote := func(ip, name string) *hnslb.Endpoint {
		return &hnslb.Endpoint{Name: name, IpConfigurations: []hnslb.IPConfig{{IpAddress: ip}}, Flags: hnslb.EndpointFlagsRemoteEndpoint}
	}
	for _, c := range []struct {
		ep   *hnslb.Endpoint
		want bool
	}{
		{remote("10.244.2.20", "hnsproxy-remote-10.244.2.20"), true},
		{remote("fd00::a", "HNSPROXY-REMOTE-FD00::A"), true},            // another case
		{remote("fd00:0:0:0:0:0:0:a", "hnsproxy-remote-fd00::a"), true}, // another form of the address
		{remote("fd00::b", "hnsproxy-remote-fd00::a"), false},
		{remote("10.244.2.20", ""), false},
		{remote("10.244.2.20", "hnsproxy-remote-10.244.2.21"), false}, // another address's
		{remote("10.244.2.20", "hnsproxy-remote-10.244.2.200"), false},
		{remote("10.244.2.20", "hnsproxy-remote-"), false},
		{remote("", "hnsproxy-remote-"), false},
		{remote("10.244.2.20", "kube-proxy-10.244.2.20_"), false},
		{&hnslb.Endpoint{Name: "hnsproxy-remote-10.244.1.5", IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5"}}}, false}, // local
	} {
		if got := namedOurs(c.ep); got != c.want {
			t.Errorf("namedOurs(%q at %s, remote %v) = %v, want %v", c.ep.Name, c.ep.IP(), c.ep.IsRemote(), got, c.want)
		}
	}
	if got := buildRemoteEndpoint("net", intent.RemoteEndpoint{IP: "10.244.2.20"}); !namedOurs(got) {
		t.Errorf("hnsproxy's own remote endpoint document %+v does not bear its name", got)
	}
	if got := buildRemoteEndpoint("net", intent.RemoteEndpoint{IP: "10.244.1.2", Local: true}); got.Name != "" {
		t.Errorf("the source VIP's local endpoint is named %q", got.Name)
	}
}

// TestNamesLostIsForGood: what HNS's replies show settles whether remote
// endpoint creates are declared; one reply without the name settles it for
// the process, whatever later replies show.
func TestNamesLostIsForGood(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	var told []bool
	e.tweak = func(o *Options) { o.RemoteEndpointNames = func(kept bool) { told = append(told, kept) } }
	r := e.reconciler()
	for i, c := range []struct {
		shown    nameEcho
		declares bool
	}{{namesUnknown, true}, {namesKept, false}, {namesKept, false}, {namesUnknown, false}, {namesLost, true}, {namesKept, true}, {namesLost, true}} {
		r.learnNames(c.shown)
		if got := r.declaresEndpoints(); got != c.declares {
			t.Errorf("after reply %d showing %d: declares %v, want %v", i, c.shown, got, c.declares)
		}
	}
	if len(told) != 2 || !told[0] || told[1] {
		t.Errorf("Options.RemoteEndpointNames told %v, want [true false]: once when kept, once when lost", told)
	}
}

// TestStartLearnsNamesFromItsListing: a restart that lists one of our named
// endpoints knows that HNS keeps names before it creates anything, so its
// first remote endpoint create is not declared (no fsync); where HNS drops
// names, the listing shows none and the create is declared.
func TestStartLearnsNamesFromItsListing(t *testing.T) {
	for _, namesKept := range []bool{true, false} {
		e := newEnv(t, sim.ProfileWS2025) // modify: the load balancer's change declares nothing
		if !namesKept {
			e.declaringEndpoints()
		}
		e.local("10.244.1.11")
		a := lb("10.96.0.10", 80, loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.2"))
		e.started(a)
		r, _ := e.start(e.hns, a)
		fsyncs := countJournalFsyncs(r)
		a.Backends = append(a.Backends, rem("10.244.2.21", "192.168.0.2"))
		upsert(r, a)
		if res := r.Sync(ctx); res.Failed+res.Pending != 0 || res.Created != 1 {
			t.Fatalf("names kept %v: %+v", namesKept, res)
		}
		if want := map[bool]int{true: 0, false: 1}[namesKept]; *fsyncs != want {
			t.Errorf("names kept %v: the first create after the restart made %d fsyncs, want %d", namesKept, *fsyncs, want)
		}
	}
}

// TestLateNamedCreateIsClaimedByTheRepair: where HNS keeps names, a remote
// endpoint's create is not declared. If it is abandoned at its deadline,
// hnsproxy killed and the create lands after the restart listed HNS, no
// declaration is carried; the first drift repair after the restart takes
// the endpoint by its name and deletes it once its Service is gone. An
// endpoint of another program (no name of ours) stays.
func TestLateNamedCreateIsClaimedByTheRepair(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(0)
	e.local("10.244.1.10")
	_, foreignEP := e.foreign()
	first := lb("10.96.0.10", 80, loc("10.244.1.10"), rem("10.244.2.20", "192.168.0.2"))
	killed := w.watch(e.started(first)) // its reply shows the name kept
	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpCreateEndpoint}})
	second := lb("10.96.0.11", 80, rem("10.244.2.21", "192.168.0.2"))
	upsert(killed, second)
	if res := e.syncPastHangs(killed, 1); res.Failed == 0 {
		t.Fatalf("sync with a hung create: %+v", res)
	}
	if s := readState(t, e.stateFile); len(s.CreatingRemoteEndpoints) != 0 {
		t.Fatalf("the hung create was declared %v, though HNS keeps names", s.CreatingRemoteEndpoints)
	}

	// Killed; the second Service is deleted before the restart.
	r, res := e.start(e.hns, first)
	if res.Failed+res.Pending != 0 {
		t.Fatalf("first sync after the restart: %+v", res)
	}
	e.hns.SetFaults(sim.Faults{})
	<-w.returned // the abandoned create lands now
	if ips := e.remoteIPs(); len(ips) != 3 {
		t.Fatalf("HNS holds remote endpoints %v, want the late create's beside the first Service's and the foreign one", ips)
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	if ips := e.remoteIPs(); len(ips) != 2 || ips[0] != "10.244.2.20" || ips[1] != "10.244.9.9" {
		t.Errorf("after the repair HNS holds remote endpoints %v, want the first Service's and the foreign one", ips)
	}
	if got := e.hnsLB(first.Key); got == nil || len(got.HostComputeEndpoints) != 2 || e.hnsLB(second.Key) != nil {
		t.Errorf("load balancers after the repair: the first %+v, the second %+v; want the first with both backends, and no second", got, e.hnsLB(second.Key))
	}
	for _, ep := range e.snapshot().Endpoints {
		if ep.ID == foreignEP {
			return
		}
	}
	t.Error("the foreign remote endpoint was deleted")
}

// TestCleanupDeletesNamedEndpoints: --cleanup deletes a remote endpoint
// bearing hnsproxy's name that the state file does not own (a create whose
// outcome a crash lost), and leaves another program's.
func TestCleanupDeletesNamedEndpoints(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	foreignLB, foreignEP := e.foreign()
	e.started()
	if _, err := e.hns.CreateEndpoint(ctx, e.netID, buildRemoteEndpoint(e.netID, intent.RemoteEndpoint{IP: "10.244.2.30"})); err != nil {
		t.Fatal(err)
	}
	res, err := Cleanup(ctx, e.hns, e.options())
	if err != nil || res.DeletedEndpoints != 1 {
		t.Fatalf("cleanup: %+v %v; want the named endpoint deleted", res, err)
	}
	e.assertOnlyForeignLeft(foreignLB, foreignEP)
}

// TestALoneCreateTeachesNames: a remote endpoint created in its own turn
// (no batch: one create, no load balancer write beside it) settles what
// HNS does with names, as a batch's creates do.
func TestALoneCreateTeachesNames(t *testing.T) {
	for _, kept := range []bool{true, false} {
		e := newEnv(t, sim.ProfileWS2025)
		if !kept {
			e.declaringEndpoints()
		}
		r := e.started()
		r.UpsertEndpoint(intent.EndpointOf(rem("10.244.2.20", "192.168.0.2")))
		if res := r.Sync(ctx); res.Failed+res.Pending != 0 || res.Created != 1 {
			t.Fatalf("names kept %v: %+v", kept, res)
		}
		want := map[bool]nameEcho{true: namesKept, false: namesLost}[kept]
		r.mu.Lock()
		got := r.names
		r.mu.Unlock()
		if got != want {
			t.Errorf("names kept %v: after a lone create the reconciler knows %d, want %d", kept, got, want)
		}
	}
}
