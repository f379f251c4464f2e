package reconciler

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// named makes the reconciler check its network by name ("cbr0").
func (e *env) named() { e.tweak = func(o *Options) { o.NetworkName = "cbr0" } }

// replaceNetwork deletes the network, with its endpoints, as a CNI that
// makes it again does; with again, it makes one of the same name and
// returns its ID. The counters start again after it.
func (e *env) replaceNetwork(again bool) string {
	e.t.Helper()
	defer e.hns.ResetCounters()
	id, err := e.hns.ReplaceNetwork(ctx, e.netID, again)
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// podOn wires a pod on network netID as the CNI does (namespace, endpoint).
func (e *env) podOn(netID, ip string) {
	e.t.Helper()
	ep, err := e.hns.CreateEndpoint(ctx, netID, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: ip}}})
	if err != nil {
		e.t.Fatal(err)
	}
	ns, err := e.hns.CreateNamespace(ctx, &hnslb.Namespace{Type: hnslb.NamespaceTypeHost})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.hns.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		e.t.Fatal(err)
	}
}

// wantChanged checks that got reports the network cbr0, whose ID was
// wasID, as now nowID ("" for gone).
func wantChanged(t *testing.T, got error, wasID, nowID string) {
	t.Helper()
	var changed *NetworkChangedError
	if !errors.As(got, &changed) {
		t.Fatalf("got %v, want the network reported gone or replaced", got)
	}
	if changed.Name != "cbr0" || changed.WasID != wasID || !strings.EqualFold(changed.NowID, nowID) {
		t.Errorf("got %+v, want cbr0 from %s to %q", changed, wasID, nowID)
	}
}

// networkReads is how many reads by name find the network replaced (again)
// or gone: a "not found" is believed at its silentListings-th look
// (hnslb.GetLooking).
func networkReads(again bool) int {
	if again {
		return 1
	}
	return silentListings
}

// TestNetworkGoneOrReplacedIsReported: when the network is deleted (and
// maybe made again under its name with a new ID), what hnsproxy made on it
// went with it. A drift repair reads the network by name before it lists
// and reports the change rather than listing a network that is gone. A
// Sync reports it after an answer that suggests it: a remote endpoint's
// create answered "not found" (each code HNS may give), or a new pod, which
// a load balancer waits for, on another network. Either costs one read by
// name (three to believe "gone"), and nothing is written to HNS on the way.
func TestNetworkGoneOrReplacedIsReported(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, again := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/repair/again=%v", profile, again), func(t *testing.T) {
				e := newEnv(t, profile)
				e.named()
				e.local("10.244.1.10")
				r := e.started(lb("10.96.0.10", 80, loc("10.244.1.10"), rem("10.244.2.10", "192.168.1.2")))
				was := e.netID
				now := e.replaceNetwork(again)
				wantChanged(t, r.Repair(ctx), was, now)
				c := e.counters()
				if c.Count(sim.OpGetNetwork) != networkReads(again) || e.fullListings() != 0 {
					t.Errorf("the repair made %d network reads and %d listings; want %d and no listing", c.Count(sim.OpGetNetwork), e.fullListings(), networkReads(again))
				}
			})
			for _, code := range sim.MissingNetworkCodes() {
				t.Run(fmt.Sprintf("%s/remote-endpoint-create/0x%x/again=%v", profile, uint32(code), again), func(t *testing.T) {
					e := newEnvVariants(t, profile, sim.ErrorVariants{MissingNetwork: code})
					e.named()
					e.local("10.244.1.10")
					r := e.started(lb("10.96.0.10", 80, loc("10.244.1.10")))
					met := &codesMet{Client: e.hns}
					r.client = newDeadlines(met, r.opts, r.log)
					was := e.netID
					now := e.replaceNetwork(again)
					upsert(r, lb("10.96.0.11", 80, rem("10.244.2.10", "192.168.1.2")))
					res := r.Sync(ctx)
					if !met.met(code) {
						t.Errorf("the remote endpoint's create did not meet 0x%x, the code this run is for (met %#x)", uint32(code), met.codes)
					}
					if res.NetworkChanged == nil {
						t.Fatalf("sync %+v reported no network change", res)
					}
					wantChanged(t, res.NetworkChanged, was, now)
					if n := e.counters().Count(sim.OpGetNetwork); n != networkReads(again) {
						t.Errorf("%d network reads; want %d", n, networkReads(again))
					}
				})
			}
		}
		t.Run(profile+"/pod-on-the-new-network", func(t *testing.T) {
			e := newEnv(t, profile)
			e.named()
			e.local("10.244.1.10")
			r := e.started(lb("10.96.0.10", 80, loc("10.244.1.10")))
			was := e.netID
			now := e.replaceNetwork(true)
			e.podOn(now, "10.244.1.11")
			upsert(r, lb("10.96.0.11", 80, loc("10.244.1.11")))
			res := r.Sync(ctx)
			if res.NetworkChanged == nil {
				t.Fatalf("sync %+v reported no network change", res)
			}
			wantChanged(t, res.NetworkChanged, was, now)
		})
	}
}

// TestNetworkSuspicionReadsAtMostEveryInterval: a pod on a second network
// (a node with more than one) makes the network suspect as one replaced
// would; the read by name finds it unchanged and reports nothing, and more
// suspicions within networkCheckInterval wait for it, with the next retry
// no later than when it is due.
func TestNetworkSuspicionReadsAtMostEveryInterval(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.named()
	e.local("10.244.1.10")
	r := e.started(lb("10.96.0.10", 80, loc("10.244.1.10")))
	other, err := e.hns.CreateNetwork(ctx, &hnslb.Network{Name: "nat", Type: hnslb.NetworkTypeNAT,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "172.20.0.0/16"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	e.podOn(other.ID, "172.20.0.5")
	reads := func() int { return e.counters().Count(sim.OpGetNetwork) }

	upsert(r, lb("10.96.0.11", 80, loc("172.20.0.5")))
	if res := r.Sync(ctx); res.NetworkChanged != nil {
		t.Fatalf("the network is unchanged, but the sync reported %v", res.NetworkChanged)
	}
	if reads() != 1 {
		t.Fatalf("%d network reads after the first suspicion; want 1", reads())
	}
	upsert(r, lb("10.96.0.12", 80, loc("172.20.0.5")))
	r.Sync(ctx)
	if reads() != 1 {
		t.Errorf("%d network reads after a second suspicion at once; want still 1", reads())
	}
	next, ok := r.NextRetry()
	if !ok || next.After(e.clock.Now().Add(networkCheckInterval)) {
		t.Errorf("next retry %v (%v); want one within %v for the waiting read", next, ok, networkCheckInterval)
	}
	e.clock.Step(networkCheckInterval + time.Millisecond)
	if res := r.Sync(ctx); res.NetworkChanged != nil || reads() != 2 {
		t.Errorf("after the interval: %d reads, change %v; want 2 reads and no change", reads(), res.NetworkChanged)
	}
}

// TestQuietNodeNoticesItsNetworkGoneWithinAProbeInterval: the network
// deleted, and maybe made again by the CNI, on a node where nothing changes
// (Remove-HnsNetwork from a runbook): kube-proxy reads the network at every
// sync and notices within --sync-period; hnsproxy waited for the drift
// repair (5 minutes), its Services' load balancers naming endpoints that
// went with the network. A Sync once every networkProbeInterval reads one
// of its endpoints by ID, a small document whatever the cluster's size;
// "not found" makes the network suspect, and the read by name tells.
// Between probes, Syncs read nothing; with the network in place the probe
// costs that one read and no read by name.
func TestQuietNodeNoticesItsNetworkGoneWithinAProbeInterval(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, again := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/again=%v", profile, again), func(t *testing.T) {
				e := newEnv(t, profile)
				e.named()
				r := e.started(lb("10.96.0.10", 80, rem("10.244.2.10", "192.168.1.2")))
				e.clock.Step(networkProbeInterval)
				if res := r.Sync(ctx); res.NetworkChanged != nil {
					t.Fatalf("the network in place reported changed: %v", res.NetworkChanged)
				}
				c := e.counters()
				if c.Count(sim.OpGetEndpoint) != 1 || c.Count(sim.OpGetNetwork) != 0 {
					t.Errorf("a probe with the network in place made %d endpoint reads and %d network reads; want 1 and 0", c.Count(sim.OpGetEndpoint), c.Count(sim.OpGetNetwork))
				}
				was := e.netID
				now := e.replaceNetwork(again)
				if res := r.Sync(ctx); res.NetworkChanged != nil || e.counters().Total() != 0 {
					t.Fatalf("a Sync before the probe is due: %+v, %d calls; want none", res, e.counters().Total())
				}
				e.clock.Step(networkProbeInterval)
				res := r.Sync(ctx)
				if res.NetworkChanged == nil {
					t.Fatalf("sync %+v a probe interval after the network went reported no change", res)
				}
				wantChanged(t, res.NetworkChanged, was, now)
			})
		}
	}
}

// TestStartReportsTheNetworkReplacedWhateverItsListingAnswers: the network
// replaced (or deleted) after the daemon read it, and HNS's listing of its
// endpoints failing with a code other than "not found" (which code HNS
// answers for a network gone is not known: docs/simulator.md). Start reads
// the network by name on any failed listing and reports the change, so
// the process ends at once to start on the network HNS has now, instead of
// retrying a listing of a network gone as a transient failure for a
// minute. With the network in place the same failure stays transient.
func TestStartReportsTheNetworkReplacedWhateverItsListingAnswers(t *testing.T) {
	for _, code := range []hnslb.ErrorCode{hnslb.CodeInvalidParameter, 0x80004005} {
		for _, again := range []bool{true, false} {
			t.Run(fmt.Sprintf("%#x/again=%v", uint32(code), again), func(t *testing.T) {
				e := newEnv(t, sim.ProfileWS2022)
				e.named()
				was := e.netID
				now := e.replaceNetwork(again)
				e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpListEndpoints: 1}, Errors: []hnslb.ErrorCode{code}})
				err := e.reconciler().Start(ctx)
				wantChanged(t, err, was, now)
				if hnslb.IsTransient(err) {
					t.Errorf("start error %v is transient; a network gone is not retried", err)
				}
			})
		}
		t.Run(fmt.Sprintf("%#x/in-place", uint32(code)), func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			e.named()
			e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpListEndpoints: 1}, Errors: []hnslb.ErrorCode{code}})
			err := e.reconciler().Start(ctx)
			var changed *NetworkChangedError
			if errors.As(err, &changed) || !hnslb.IsTransient(err) {
				t.Errorf("start with the network in place and its listing failing: %v, want a transient error", err)
			}
		})
	}
}

// A read of the network by the reconciler's caller (the overlay's remote
// subnet routes) that HNS answers "not found" has the next Sync check the
// network and report it gone: a Sync with nothing due to write met no
// other answer that said so, and the change waited for the next drift
// repair, the node's Services on a network no longer there meanwhile.
func TestANetworkReadAnsweredNotFoundHasTheNextSyncReportTheNetworkGone(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.named()
	r := e.started(e.threeServices()...)
	wasID := e.netID
	e.replaceNetwork(false)
	if _, err := r.Network(ctx); !hnslb.IsNotFound(err) {
		t.Fatalf("reading the deleted network: %v, want not found", err)
	}
	res := r.Sync(ctx)
	if res.NetworkChanged == nil {
		t.Fatalf("sync after the network read answered not found: %+v, want the network reported gone", res)
	}
	wantChanged(t, res.NetworkChanged, wasID, "")
}
